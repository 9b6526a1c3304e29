# Timeline benchmarks: projection throughput and page latency (docs/benchmarks-timeline.md).
# Included from bench/CMakeLists.txt.
find_package(benchmark CONFIG REQUIRED)
add_executable(timeline_bench ${CMAKE_CURRENT_LIST_DIR}/timeline_bench.cc)
target_link_libraries(timeline_bench PRIVATE agentstream_turn agentstream_timeline benchmark::benchmark)
