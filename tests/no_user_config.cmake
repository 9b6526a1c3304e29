# Included by ctest (TEST_INCLUDE_FILES of the top-level CMakeLists.txt) before it runs any test:
# the environment set here is every test's. A test of the configuration file sets its own
# (src/cli/config_test.sh).
set(ENV{AGENTSTREAM_CONFIG} /dev/null)
