// The code point class table of unicode_class.hpp, embedded as read-only data: the bytes
// unicode_table_gen wrote at build time (see src/tok/CMakeLists.txt), placed by the assembler.
#include "tok/unicode_class.hpp"

#include <bit>

#include "tok/unicode_class_table.hpp"  // generated: the table file and a hash of its bytes

namespace overhead::tok::unicode {

// The generator writes the 16-bit entries little-endian.
static_assert(std::endian::native == std::endian::little, "the embedded class table is little-endian");
// Names the table's contents, so a changed table is a changed translation unit for compiler caches.
[[maybe_unused]] constexpr unsigned long long kTableDigest = OVERHEAD_UNICODE_TABLE_DIGEST;
// The file holds one 16-bit entry per code point (the generator writes its size beside it).
static_assert(OVERHEAD_UNICODE_TABLE_BYTES == kCodePoints * 2, "the embedded class table has the wrong size");

__asm__(
    ".pushsection .rodata.overhead_tok_unicode_class_table,\"a\",%progbits\n"
    ".balign 64\n"
    ".globl overhead_tok_unicode_class_table\n"
    ".hidden overhead_tok_unicode_class_table\n"
    ".type overhead_tok_unicode_class_table,%object\n"
    "overhead_tok_unicode_class_table:\n"
    ".incbin " OVERHEAD_UNICODE_TABLE_FILE "\n"
    ".size overhead_tok_unicode_class_table, 0x220000\n"
    ".popsection\n");

}  // namespace overhead::tok::unicode
