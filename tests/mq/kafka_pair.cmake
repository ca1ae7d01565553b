# Two canal-servers in Kafka mode on one ZooKeeper (kafka_pair_test.cc): the active one
# SIGKILLed mid-stream, the standby publishing on from the cursor in ZooKeeper. Its own
# MariaDB (port 14260), ZooKeeper (14261) and canal-server pairs (14262-14265: the "mq" block's
# 60-79), librdkafka's mock cluster in the test process.
add_executable(canal_mq_kafka_pair_tests kafka_pair_test.cc kafka_mock.cc)
target_include_directories(canal_mq_kafka_pair_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/..)
# canal_client: for support/server_suite.h (the suite's base), which declares a client helper.
target_link_libraries(canal_mq_kafka_pair_tests PRIVATE canal_mq_test_support canal_coord canal_client
  PkgConfig::RDKAFKA GTest::gtest_main nlohmann_json::nlohmann_json)
if(TARGET canal-server)
  add_dependencies(canal_mq_kafka_pair_tests canal-server)
endif()
# (~30 s and ~25 s for the two variants. PROCESSORS 2: a broker, a MariaDB, a ZooKeeper and two canal-servers.)
gtest_discover_tests(canal_mq_kafka_pair_tests DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS integration RESOURCE_LOCK canal_mq_kafka_pair COST 6 PROCESSORS 2)
