# The CUDA reducer's tests, included from tests/CMakeLists.txt (after pacer_reducer_conformance)
# where the CUDA back end is built. Without a usable device every test reports SKIPPED; with
# PACER_REQUIRE_CUDA=1 in the environment they fail instead (cuda/check.sh sets it).
add_executable(pacer-cuda-tests ${CMAKE_CURRENT_LIST_DIR}/../tests/cuda/cuda_reducer_test.cc)
target_link_libraries(pacer-cuda-tests PRIVATE pacer_reducer_conformance pacer_cuda GTest::gmock
  GTest::gtest_main)
include(GoogleTest)
gtest_discover_tests(pacer-cuda-tests TEST_PREFIX "cuda." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 600 LABELS cuda SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
