"""What Renode's cortex-m85 (platforms/cpus/renesas-r7fa8m1a.repl) executes: a probe, not a test.

    python bench/renode_m85_isa.py [--renode PATH]

Builds two bare-metal probes for the RA8M1's memory map and runs each on Renode:

* ``mve``: VLDRB.8 + VMLADAVA.S8 and VQRDMULH.S32 (Helium, -mcpu=cortex-m55) beside the same
  dot product in scalar code;
* ``v81m``: the Armv8.1-M scalar additions GCC emits for -mcpu=cortex-m55: CSEL, CSET, CSINC,
  CSNEG after ``cmp 5, 7`` and the low-overhead loops DLS/LE, WLS/LE.

Each probe stores its results in SRAM (word 0: 0x600DF00D when it ran through, 0xBADBADxx on a
fault, xx = UFSR's low byte); the table shows every word beside the value the Arm ARM defines.
Renode 1.15.1 (the portable build of ../shared/tools/renode): the first VLDRB takes a UsageFault
(UNDEFINSTR, UFSR = 0x01: it decodes as a coprocessor load), and CSEL/CSET/CSINC/CSNEG return
garbage in their upper bits, while DLS/LE and WLS/LE are right. Hence ek-ra8m1 builds for
Armv7E-M (-mcpu=cortex-m7, the DSP kernels).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from tinyhost.deploy.renode import find_renode

PLATFORM = "platforms/cpus/renesas-r7fa8m1a.repl"
RESULTS = 0x22000000

COMMON = r"""
#include <stdint.h>
extern uint32_t _estack;
volatile uint32_t result[8] __attribute__((section(".res")));
static void probe(void);
void reset(void)
{
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10/CP11 (FPU and MVE) */
    __asm volatile("dsb\n isb");
    probe();
    result[0] = 0x600DF00Du;
    for (;;) {
    }
}
void fault(void)
{
    result[0] = 0xBADBAD00u | ((*(volatile uint32_t *)0xE000ED28u >> 16) & 0xFFu);
    for (;;) {
    }
}
__attribute__((section(".vectors"))) void *const vectors[16] = {
    &_estack, (void *)reset, (void *)fault, (void *)fault, (void *)fault, (void *)fault,
    (void *)fault};
"""

MVE = COMMON + r"""
#include <arm_mve.h>
static const int8_t a[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, -16};
static const int8_t b[16] = {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12, -13, 14, -15, 16};
static void probe(void)
{
    const int8_t *pa = a, *pb = b;
    int32_t x = 0x40000000, y = 0x20000001, s = 100;
    __asm volatile("" : "+r"(pa), "+r"(pb), "+r"(x), "+r"(y));
    for (int i = 0; i < 16; i++) {
        s += pa[i] * pb[i];
    }
    result[3] = (uint32_t)s;
    __asm volatile("dsb" ::: "memory"); /* the scalar result is stored before any MVE */
    result[1] = (uint32_t)vmladavaq_s8(100, vldrbq_s8(pa), vldrbq_s8(pb));
    result[2] = (uint32_t)vgetq_lane_s32(vqrdmulhq_s32(vdupq_n_s32(x), vdupq_n_s32(y)), 0);
}
"""

V81M = COMMON + r"""
static void probe(void)
{
    uint32_t r1, r2, r3, r4, n = 10, s = 0, m = 0, t = 0;
    int32_t a = 5, b = 7;
    __asm volatile("cmp %4, %5\n csel %0, %4, %5, lt\n cset %1, lt\n"
                   " csinc %2, %4, %5, ge\n csneg %3, %4, %5, ge"
                   : "=r"(r1), "=r"(r2), "=r"(r3), "=r"(r4) : "r"(a), "r"(b) : "cc");
    __asm volatile("dls lr, %1\n1: add %0, %0, #3\n le lr, 1b" : "+r"(s) : "r"(n) : "lr");
    __asm volatile("wls lr, %1, 2f\n1: add %0, %0, #1\n le lr, 1b\n2:" : "+r"(t) : "r"(m) : "lr");
    result[1] = r1;
    result[2] = r2;
    result[3] = r3;
    result[4] = r4;
    result[5] = s;
    result[6] = t;
}
"""

LINKER = """
MEMORY {
  FLASH (rx) : ORIGIN = 0x02000000, LENGTH = 64K
  RAM (rwx) : ORIGIN = 0x22000000, LENGTH = 64K
}
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) } > FLASH
  .res (NOLOAD) : { *(.res) } > RAM
  .bss : { *(.bss*) } > RAM
  _estack = ORIGIN(RAM) + LENGTH(RAM);
}
"""

_A = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, -16]
_B = [-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12, -13, 14, -15, 16]
_DOT = (100 + sum(x * y for x, y in zip(_A, _B))) & 0xFFFFFFFF
# per probe: (result word, what, the value the Arm ARM defines)
EXPECTED = {
    "mve": [
        (0, "ran through", 0x600DF00D),
        (1, "VLDRB.8 + VMLADAVA.S8 (100 + a.b)", _DOT),
        (2, "VQRDMULH.S32 (0x40000000, 0x20000001)", 0x10000001),
        (3, "scalar 100 + a.b", _DOT),
    ],
    "v81m": [
        (0, "ran through", 0x600DF00D),
        (1, "CSEL lt (5 < 7) -> 5", 5),
        (2, "CSET lt -> 1", 1),
        (3, "CSINC ge -> 7 + 1", 8),
        (4, "CSNEG ge -> -7", 0xFFFFFFF9),
        (5, "DLS/LE 10 x 3", 30),
        (6, "WLS/LE 0 iterations", 0),
    ],
}


def build(name: str, source: str, cpu: str, d: Path) -> Path:
    (d / f"{name}.c").write_text(source)
    (d / "probe.ld").write_text(LINKER)
    elf = d / f"{name}.elf"
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-mfloat-abi=hard", "-O2",
                    "-nostdlib", "-T", str(d / "probe.ld"), str(d / f"{name}.c"), "-o", str(elf)],
                   check=True)  # fmt: skip
    return elf


def run(renode: str, elf: Path, words: int, d: Path) -> list[int | None]:
    reads = "".join(f"sysbus ReadDoubleWord {RESULTS + 4 * i:#x}\n" for i in range(words))
    script = d / f"{elf.stem}.resc"
    script.write_text(f'mach create "probe"\nmachine LoadPlatformDescription @{PLATFORM}\n'
                      f"sysbus LoadELF @{elf}\nsysbus.cpu VectorTableOffset 0x02000000\n"
                      f'emulation RunFor "0.01"\necho "RESULTS"\n{reads}quit\n')  # fmt: skip
    out = subprocess.run([renode, "--disable-xwt", "--console", "--plain", "-e",
                          f"i @{script}"], capture_output=True, text=True, timeout=300,
                         stdin=subprocess.DEVNULL).stdout  # fmt: skip
    lines = out.split("RESULTS", 1)[-1].split()
    values = [int(t, 16) for t in lines if t.startswith("0x")][:words]
    return values + [None] * (words - len(values))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--renode", help="Renode launcher (default: as tinyhost finds it)")
    args = ap.parse_args(argv)
    tool = find_renode(args.renode)
    print(f"Renode: {tool.path} ({tool.source}); platform {PLATFORM}")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, source, cpu in (("mve", MVE, "cortex-m55"), ("v81m", V81M, "cortex-m55+nomve")):
            rows = EXPECTED[name]
            got = run(tool.path, build(name, source, cpu, d), len(rows), d)
            print(f"\n{name} (-mcpu={cpu})")
            for word, what, want in rows:
                value = got[word]
                shown = "-" if value is None else f"{value:#010x}"
                verdict = "ok" if value == want else "WRONG"
                print(f"  {what:<40} {shown:>12}  (Arm ARM {want:#010x})  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
