// doctest's runner: `unit_tests` runs every case; doctest's own flags apply (-tc=<name>, -s).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
