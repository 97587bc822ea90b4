#include <gtest/gtest.h>
TEST(CompileErrors, Placeholder) {}
