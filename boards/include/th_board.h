/*
 * th_board.h - the board API every tinyhost firmware is written against.
 *
 * One implementation per board family lives under boards/: Cortex-M boards
 * (QEMU and, later, real hardware) share boards/common/, the native "host"
 * board is boards/host/. The build passes the board's data (boards/<name>/
 * board.json) in as TH_BOARD_* definitions, so code here never hard-codes a
 * board.
 */
#ifndef TH_BOARD_H
#define TH_BOARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TH_BOARD_NAME
#define TH_BOARD_NAME "unknown"
#endif

/* Exit codes the board layer itself uses (apps use 0 / small numbers). */
#define TH_EXIT_OK 0
#define TH_EXIT_HARDFAULT 120
#define TH_EXIT_UNHANDLED_IRQ 121
#define TH_EXIT_MAIN_RETURNED_BAD 122

/* Place a buffer in the linker's .arena section (RAM, 16-byte aligned, not
 * zeroed at boot: the planner owns its contents). */
#if defined(__arm__) && !defined(__linux__)
#define TH_ARENA __attribute__((section(".arena"), aligned(16)))
#else
#define TH_ARENA __attribute__((aligned(16)))
#endif

/* --- init -------------------------------------------------------------- */

/* Bring up UART and counter. Call once, first thing in main(). */
void th_board_init(void);

/* The board's name as in boards/<name>/, e.g. "mps2-an386". */
const char *th_board_name(void);

/* --- UART -------------------------------------------------------------- */

/* Blocking write of len bytes (host board: stdout). */
void th_uart_write(const uint8_t *buf, size_t len);

/* Convenience: write a NUL-terminated string. */
void th_uart_puts(const char *s);

/* Read one byte. timeout_ms = 0 polls once, TH_WAIT_FOREVER blocks.
 * Returns 1 and stores the byte, or 0 on timeout. On emulators under
 * -icount the timeout is in virtual (instruction) time. */
#define TH_WAIT_FOREVER 0xFFFFFFFFu
int th_uart_read_byte(uint8_t *out, uint32_t timeout_ms);

/* --- counter ----------------------------------------------------------- */

/* Free-running 64-bit counter, extended in software from the hardware
 * width: read it at least once per hardware wrap (TIM2: 2^32 ticks,
 * SysTick: 2^24 ticks) or wraps are missed. */
uint64_t th_counter_read(void);

/* Unit of th_counter_read(): "instructions" (QEMU TIM2 under icount),
 * "cycles" (DWT on real hardware), "systick" (coarse SysTick ticks) or
 * "host-ns". */
const char *th_counter_unit(void);

/* Counter ticks per second of (virtual) time. */
uint64_t th_counter_hz(void);

/* --- faults ------------------------------------------------------------ */

/* What a fault handler saw: the exception taken (3 HardFault, 4 MemManage, 5 BusFault,
 * 6 UsageFault, 7 SecureFault), the stacked pc/lr/xpsr and the fault status registers. */
typedef struct {
    uint32_t exception;
    uint32_t pc, lr, xpsr;
    uint32_t cfsr, hfsr, mmfar, bfar;
} th_fault_info;

/* Called first by the boards' fault handler (a weak no-op otherwise), then the fault is
 * reported by semihosting/UART text and the program ends (th_exit). The protocol firmware
 * sends the fault over the link from here. */
void th_fault_hook(const th_fault_info *info);

/* --- exit -------------------------------------------------------------- */

/* End the program with an exit code: semihosting SYS_EXIT_EXTENDED on
 * emulators (QEMU exits with this code), exit() on the host board. */
void th_exit(int code) __attribute__((noreturn));

/* --- semihosting ------------------------------------------------------- */

/* Files on the machine running the emulator (paths relative to its cwd).
 * The host board maps these onto POSIX open/read/write. Modes follow
 * fopen: */
#define TH_SH_MODE_R 1  /* "rb" */
#define TH_SH_MODE_W 5  /* "wb" (create/truncate) */
#define TH_SH_MODE_A 9  /* "ab" */

/* Returns a handle >= 0, or -1. */
int th_sh_open(const char *path, int mode);
/* Returns bytes read (0 at end of file), or -1. */
long th_sh_read(int handle, void *buf, size_t len);
/* Returns bytes written, or -1. */
long th_sh_write(int handle, const void *buf, size_t len);
/* Returns the file's length in bytes, or -1. */
long th_sh_flen(int handle);
/* Returns 0 or -1. */
int th_sh_close(int handle);
/* Write a NUL-terminated string to the emulator's console (stderr of QEMU
 * with target=native; stdout on the host board). */
void th_sh_puts(const char *s);

/* --- instruction-count markers --------------------------------------- */

/* Empty functions whose entry the QEMU icount plugin watches: every
 * instruction from the first instruction of th_mark_start (inclusive) to
 * the first instruction of th_mark_stop (exclusive) is counted; each pair
 * yields one number. Their bodies are exactly one instruction (bx lr) on
 * Cortex-M, so a region of K instructions between "bl th_mark_start" and
 * "bl th_mark_stop" counts K + 2 (the marker's bx lr and the bl to stop). */
void th_mark_start(void);
void th_mark_stop(void);
#define TH_MARK_OVERHEAD 2

/* One-instruction function (bx lr) whose every execution the plugin's mark
 * mode logs with the running instruction total: two consecutive calls around
 * K instructions differ by K + TH_MARK_OVERHEAD. A no-op everywhere else. */
void th_icount_mark(void);

/* --- stack use --------------------------------------------------------- */

/* th_stack_paint() fills the stack below the caller's frame with a pattern; after the work
 * to measure, th_stack_peak() returns how many bytes of stack have been used since (the
 * deepest overwritten word, measured from the stack's top). 0 where unknown: the host
 * board, whose stack the OS owns. Counted in bench's RAM total (ARCHITECTURE.md §4.8). */
void th_stack_paint(void);
uint32_t th_stack_peak(void);
/* The stack's size in bytes (boards/common/th_sections.ld, __stack_size), 0 on the host board.
 * Its lowest TH_STACK_CANARY_BYTES are the canary: a measured peak that reaches into them
 * means the work overflowed the stack into whatever lies below it. */
uint32_t th_stack_size(void);
#define TH_STACK_CANARY_BYTES 32u

/* --- small formatting helpers (no printf needed) ----------------------- */

/* Writes the decimal form of v into buf (>= 21 bytes), returns length. */
size_t th_fmt_u64(char *buf, uint64_t v);

#ifdef __cplusplus
}
#endif

#endif /* TH_BOARD_H */
