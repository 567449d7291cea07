//go:build !purego

package kernel

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Linux hands out the AMX tile data state (XTILEDATA, 8 KiB per thread)
// only to processes that ask for it: a tile instruction run without the
// permission raises SIGILL. arch_prctl codes from asm/prctl.h, the
// feature number from the XSAVE layout.
const (
	archGetXcompPerm = 0x1022 // ARCH_GET_XCOMP_PERM
	archReqXcompPerm = 0x1023 // ARCH_REQ_XCOMP_PERM
	xfeatureTileData = 18     // XFEATURE_XTILEDATA
)

// requestAMX reports whether GemmBF16 may use AMX-BF16: the CPU has
// AMX-TILE and AMX-BF16 (CPUID leaf 7, subleaf 0, EDX bits 24 and 22, as
// golang.org/x/sys/cpu reads them) and Linux grants this process the tile
// data state. The permission is the process's, for every thread, and
// stays for its lifetime; asking again is harmless.
func requestAMX() bool {
	if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 || !cpu.X86.HasAVX512F {
		return false
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0); e != 0 {
		return false
	}
	// Confirm: the granted features include XTILEDATA.
	var perm uint64
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&perm)), 0); e != 0 {
		return false
	}
	return perm&(1<<xfeatureTileData) != 0
}
