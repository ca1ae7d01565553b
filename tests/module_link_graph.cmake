# The allowed module graph, checked (CTest module_link_graph and its
# module_link_graph_refuses_* self-tests).
#
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -P module_link_graph.cmake
#       configures the source tree once more in WORK_DIR with `cmake --graphviz`
#       and checks the graph it writes (WORK_DIR/deps.dot);
#   cmake -DDOT=<file> [-DINJECT="from -> to"] -P module_link_graph.cmake
#       checks a graph already written; INJECT adds one edge to a copy first
#       (the self-tests: each must fail, naming the rule it breaks).
#
# The rules (docs/architecture.md draws the same graph):
#   1. Each of our libraries and programs links, directly, only the modules
#      listed for it in kAllowed below. A module may list only modules above
#      it, so the graph is acyclic and one-directional by construction. A new
#      module fails the check until it is added here and to the document.
#   2. Some links are refused transitively, whatever the path: the decoder
#      (and render and canal-binlog, which use only it) reaches no MySQL
#      client and no TLS library; the plain client SDK reaches no ZooKeeper;
#      MQ mode (inside the server) reaches neither the client SDK nor tools/.
#   3. Every module listed exists in the graph, so a renamed target cannot
#      pass by being absent.

cmake_policy(VERSION 3.25)

# module: the modules it may link directly (external libraries are free,
# within rule 2). Order matters: only modules above may be named.
set(kAllowed
  "canal_common:"
  "canal_wire:canal_common"
  "canal_metrics:canal_common"
  "canal_store:canal_common"
  "canal_schema:canal_common"
  "canal_row_json:canal_common"
  "canal_coord:canal_common"
  "canal_proto:canal_common,canal_wire"
  "canal_decoder:canal_common,canal_schema"
  "canal_render:canal_common,canal_decoder"
  "canal_parser:canal_common,canal_schema,canal_decoder"
  "canal_snapshot:canal_common"
  "canal_snapshot_reader:canal_common,canal_parser,canal_snapshot"
  "canal_snapshot_render:canal_common,canal_decoder,canal_render,canal_snapshot"
  "canal_snapshot_driver:canal_common,canal_schema,canal_decoder,canal_parser,canal_snapshot,canal_snapshot_reader,canal_snapshot_render"
  "canal_meta:canal_common,canal_schema,canal_coord"
  "canal_sink:canal_common,canal_schema,canal_parser,canal_render,canal_proto,canal_store,canal_wire"
  "canal_mq:canal_common,canal_proto,canal_store,canal_meta"
  "canal_server:canal_common,canal_coord,canal_meta,canal_metrics,canal_mq,canal_parser,canal_proto,canal_sink,canal_snapshot,canal_snapshot_driver,canal_store,canal_wire"
  "canal_client:canal_common,canal_proto,canal_wire"
  "canal_client_cluster:canal_client,canal_coord"
  "canal-binlog:canal_decoder,canal_render,canal_row_json,canal_schema"
  "canal-cli:canal_client_cluster,canal_row_json,canal_wire"
  "canal-server:canal_server"
  "simple_client:canal_client")

# module: what it must never reach (a substring of a library's name).
set(kNoMysqlClient "PkgConfig::MYSQLCLIENT,libmariadb,libmysqlclient,OpenSSL::")
set(kRefused
  "canal_decoder:canal_parser,${kNoMysqlClient}"
  "canal_render:canal_parser,${kNoMysqlClient}"
  "canal_snapshot_render:canal_parser,${kNoMysqlClient}"
  "canal-binlog:canal_parser,${kNoMysqlClient}"
  "canal_client:canal_coord,zookeeper"
  "canal_mq:canal_client,canal_row_json")

if(NOT DEFINED DOT)
  foreach(var SOURCE_DIR WORK_DIR GENERATOR CXX)
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "module_link_graph.cmake: -D${var}=... (or -DDOT=<graph>) is required")
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
    message(FATAL_ERROR "configuring ${SOURCE_DIR} for the module graph failed:\n${out}")
  endif()
  set(DOT ${WORK_DIR}/deps.dot)
endif()
if(NOT EXISTS ${DOT})
  message(FATAL_ERROR "module_link_graph.cmake: no graph at ${DOT}")
endif()
if(DEFINED INJECT)
  file(READ ${DOT} graph)
  string(MD5 suffix "${INJECT}")
  set(DOT ${DOT}.${suffix})
  file(WRITE ${DOT} "${graph}\n    \"injected0\" -> \"injected1\"  // ${INJECT}\n")
endif()

# The direct edges, from graphviz's "// from -> to" comments.
file(STRINGS ${DOT} edge_lines REGEX "// .+ -> .+")
set(nodes "")
foreach(line IN LISTS edge_lines)
  if(NOT line MATCHES "// (.+) -> (.+)$")
    continue()
  endif()
  set(from "${CMAKE_MATCH_1}")
  set(to "${CMAKE_MATCH_2}")
  string(MD5 id "${from}")
  list(APPEND links_${id} "${to}")
  list(APPEND nodes "${from}" "${to}")
endforeach()
list(REMOVE_DUPLICATES nodes)

function(is_ours name out)
  if(name MATCHES "^canal[_-]" OR name STREQUAL "simple_client")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

set(failures "")
set(listed "")
foreach(entry IN LISTS kAllowed)
  string(REGEX MATCH "^([^:]+):(.*)$" _ "${entry}")
  set(module "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
  foreach(dep IN LISTS allowed)
    if(NOT dep IN_LIST listed)
      list(APPEND failures "the table lets ${module} link ${dep}, which is not above it (a cycle, or a typo)")
    endif()
  endforeach()
  list(APPEND listed "${module}")
  if(NOT module IN_LIST nodes)
    list(APPEND failures "${module} is not in the graph: renamed or gone? Update this table and docs/architecture.md")
  endif()
  string(MD5 id "${module}")
  foreach(dep IN LISTS links_${id})
    is_ours("${dep}" ours)
    if(ours AND NOT dep IN_LIST allowed)
      list(APPEND failures "${module} links ${dep}, which the module graph does not allow")
    endif()
  endforeach()
endforeach()

# Rule 1 for modules missing from the table.
foreach(node IN LISTS nodes)
  is_ours("${node}" ours)
  if(ours AND NOT node IN_LIST listed)
    list(APPEND failures "${node} is not in the module graph: add it to kAllowed in tests/module_link_graph.cmake "
                         "and to docs/architecture.md")
  endif()
endforeach()

# Rule 2: everything a module reaches, breadth first.
foreach(entry IN LISTS kRefused)
  string(REGEX MATCH "^([^:]+):(.*)$" _ "${entry}")
  set(module "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" refused "${CMAKE_MATCH_2}")
  set(reached "")
  set(queue "${module}")
  while(queue)
    list(POP_FRONT queue node)
    string(MD5 id "${node}")
    foreach(dep IN LISTS links_${id})
      if(NOT dep IN_LIST reached)
        list(APPEND reached "${dep}")
        list(APPEND queue "${dep}")
        string(MD5 dep_id "${dep}")
        set(via_${dep_id} "${node}")
      endif()
    endforeach()
  endwhile()
  foreach(dep IN LISTS reached)
    string(MD5 dep_id "${dep}")
    foreach(word IN LISTS refused)
      string(FIND "${dep}" "${word}" at)
      if(NOT at EQUAL -1)
        list(APPEND failures "${module} links ${dep} (through ${via_${dep_id}}), which it must never reach")
      endif()
    endforeach()
  endforeach()
endforeach()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "module graph (${DOT}):\n  ${text}")
endif()
list(LENGTH listed count)
message(STATUS "module graph: ${count} modules, every link allowed, none reaching what it must not")
