#!/usr/bin/env bash
# The installed package, consumed as a user would: `cmake --install` into WORK/prefix, then
#   - examples/ configured out of tree with find_package(overhead CONFIG) and built (the C++
#     example on overhead::tokenizer + overhead::chat, the C example on overhead::c), both run;
#   - the C example built again with `pkg-config --cflags --libs overhead` alone, and run;
#   - docs/library.md's C and C++ programs, built with pkg-config as the page says, and run;
#   - a translation unit written as the repository writes includes ("tok/tokenizer.hpp") compiled
#     against the installed headers: the package keeps the source layout.
#   package_consumer.sh BUILD WORK [SANITIZER_FLAGS]     (run from the clone's root)
set -euo pipefail
BUILD=$(realpath "$1") WORK=$(realpath -m "$2") FLAGS=${3:-}
mkdir -p "$WORK"
MODELS=${OVERHEAD_MODELS:-models}
if [ ! -f "$MODELS/phi-4/tokenizer.json" ]; then
  echo "tokenizer files not fetched ($MODELS/phi-4): skipped"
  exit 77
fi
PREFIX=$WORK/prefix
rm -rf "$PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null

# Installed: only the stable API's headers.
(cd "$PREFIX/include" && find . -type f | sort) > "$WORK/headers.txt"
printf '%s\n' ./overhead/binding/chat_binding.hpp ./overhead/chat/chat_template.hpp ./overhead/overhead.h \
  ./overhead/tok/errors.hpp ./overhead/tok/tokenizer.hpp | diff - "$WORK/headers.txt"

LAUNCHER=() CC_=(cc) CXX_=(c++)
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) CC_=(ccache cc) CXX_=(ccache c++)
fi
cmake -S examples -B "$WORK/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" \
  "${LAUNCHER[@]}" -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$FLAGS" >/dev/null
cmake --build "$WORK/examples" >/dev/null

cpp_out=$("$WORK/examples/chat_tokens" phi-4)
echo "$cpp_out"
grep -q "round trip: same text" <<<"$cpp_out"
c_out=$("$WORK/examples/c_example" phi-4)
echo "$c_out"
grep -q "round trip: same text" <<<"$c_out"
grep -q "^batch: 1 2 3 tokens$" <<<"$c_out"
grep -q "^error 2: " <<<"$c_out"

# pkg-config alone (the static C++ libraries' dependencies come through Requires).
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# shellcheck disable=SC2046
"${CC_[@]}" $FLAGS examples/c/example.c -o "$WORK/c_example_pc" $(pkg-config --cflags --libs overhead) -Wl,-rpath,"$PREFIX/lib"
[ "$("$WORK/c_example_pc" phi-4)" = "$c_out" ]

# The C and C++ programs of docs/library.md ("Use it as a library"), built as it says and run.
readme_block() {  # LANGUAGE -> the first such code block of docs/library.md
  awk -v lang="$1" '$0 == "```" lang { in_block = 1; next } in_block && /^```/ { exit } in_block { print }' docs/library.md
}
readme_block c > "$WORK/readme.c"
readme_block cpp > "$WORK/readme.cpp"
[ -s "$WORK/readme.c" ] && [ -s "$WORK/readme.cpp" ]
# shellcheck disable=SC2046
"${CC_[@]}" $FLAGS "$WORK/readme.c" -o "$WORK/readme_c" $(pkg-config --cflags --libs overhead) -Wl,-rpath,"$PREFIX/lib"
"$WORK/readme_c" | grep -q '^[0-9][0-9]* tokens$'
# shellcheck disable=SC2046
"${CXX_[@]}" -std=c++20 $FLAGS "$WORK/readme.cpp" -o "$WORK/readme_cpp" $(pkg-config --cflags --libs overhead) -Wl,-rpath,"$PREFIX/lib"
"$WORK/readme_cpp" | grep -q '^[0-9][0-9]* tokens$'

# Repository-style includes against the installed headers.
printf '#include "binding/chat_binding.hpp"\n#include "tok/errors.hpp"\n#include "tok/tokenizer.hpp"\nint main() { return overhead::tok::Tokenizer::load("phi-4") ? 0 : 1; }\n' \
  > "$WORK/repository_style.cpp"
# shellcheck disable=SC2046
"${CXX_[@]}" -std=c++20 -fsyntax-only $(pkg-config --cflags overhead) "$WORK/repository_style.cpp"
echo "package consumer: ok"
