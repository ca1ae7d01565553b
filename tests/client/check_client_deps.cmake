# Run by CTest (client_sdk_link_graph): configures the source tree once more in
# a scratch folder with `cmake --graphviz` and checks from that graph that the
# plain client library does not link ZooKeeper, while the cluster one does
# (so the check sees coord/ when it is there).
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -P check_client_deps.cmake
foreach(var SOURCE_DIR WORK_DIR GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_client_deps.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(
  COMMAND ${CMAKE_COMMAND} -G ${GENERATOR} -S ${SOURCE_DIR} -B ${WORK_DIR}/build
          -DCMAKE_CXX_COMPILER=${CXX} -DCANAL_BUILD_TESTS=OFF -DCANAL_BUILD_BENCH=OFF
          --graphviz=${WORK_DIR}/deps.dot
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring ${SOURCE_DIR} for the dependency graph failed:\n${out}")
endif()

# deps.dot.<target> holds the target and everything it links, transitively.
function(read_graph target out_var)
  set(file ${WORK_DIR}/deps.dot.${target})
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "cmake --graphviz wrote no graph for ${target} (${file}): is the target gone?")
  endif()
  file(READ ${file} graph)
  set(${out_var} "${graph}" PARENT_SCOPE)
endfunction()

read_graph(canal_client plain)
foreach(forbidden canal_coord zookeeper)
  string(FIND "${plain}" "${forbidden}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "canal_client depends on ${forbidden}; a plain client must link proto and common only "
                        "(the ZooKeeper parts belong in canal_client_cluster). Graph:\n${plain}")
  endif()
endforeach()

read_graph(canal_client_cluster cluster)
string(FIND "${cluster}" "canal_coord" at)
if(at EQUAL -1)
  message(FATAL_ERROR "canal_client_cluster does not show canal_coord in its graph: the check cannot see coord/. "
                      "Graph:\n${cluster}")
endif()
message(STATUS "canal_client links no ZooKeeper; canal_client_cluster adds canal_coord")
