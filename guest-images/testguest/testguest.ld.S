/* SPDX-License-Identifier: Apache-2.0 */
/* Linker script of the test guest (run through the C preprocessor for
 * layout.h). Two PT_LOAD segments at or above 1 MiB and a PT_NOTE with the
 * PVH entry. */
#include "layout.h"

OUTPUT_FORMAT("elf64-x86-64")
OUTPUT_ARCH(i386:x86-64)
ENTRY(tg_pvh_start32)

PHDRS
{
	text PT_LOAD FLAGS(5);          /* R X */
	data PT_LOAD FLAGS(6);          /* R W */
	note PT_NOTE FLAGS(4);
}

SECTIONS
{
	. = TG_TEXT_BASE;
	.vectors : { KEEP(*(.vectors)) } :text
	.text : { *(.text.entry) *(.text .text.*) } :text
	.rodata : { *(.rodata .rodata.*) } :text
	.note.pvh : { KEEP(*(.note.pvh)) } :text :note
	_etext = .;

	. = TG_DATA_BASE;
	.tss : { KEEP(*(.tss)) } :data
	.data : { *(.data .data.*) } :data
	.bss : { *(.bss .bss.*) *(COMMON) } :data
	_end = .;

	/DISCARD/ : { *(.comment) *(.note.GNU-stack) *(.note.gnu.*) *(.eh_frame*) }
}

ASSERT(ADDR(.vectors) == TG_VECTORS_BASE, "interrupt stubs not at TG_VECTORS_BASE")
ASSERT(SIZEOF(.vectors) == 256 * TG_VECTOR_STUB_SIZE, "an interrupt stub is too long")
ASSERT(_etext <= TG_DATA_BASE, "text does not fit below TG_DATA_BASE")
ASSERT(ADDR(.tss) == TG_TSS_BASE, "TSS array not at TG_TSS_BASE")
ASSERT(SIZEOF(.tss) == TG_TSS_AREA_SIZE, "TSS array size")
ASSERT(_end <= 0x80000000, "image must stay below 2 GiB (sign-extended addresses)")
