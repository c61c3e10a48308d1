/*
 * Internal interface between the common Cortex-M board code and the
 * per-peripheral drivers in boards/common/drivers/. The build compiles
 * exactly one UART driver and one counter driver, chosen by board.json.
 */
#ifndef TH_BOARD_INTERNAL_H
#define TH_BOARD_INTERNAL_H

#include <stdint.h>

#define TH_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

void th_uart_hw_init(void);
/* Non-blocking: returns 1 and stores a byte if one is waiting. */
int th_uart_hw_poll(uint8_t *out);
void th_uart_hw_putc(uint8_t c);
/* Returns once every byte written has left the UART (before a reset would cut it off). */
void th_uart_hw_drain(void);
#define TH_UART_DRAIN_SPINS 1000000u

void th_counter_hw_init(void);

/* SysTick as an up-count (24 bits) extended to 64 bits by counting its wraps. Branch-free on
 * purpose: a wrap costs no extra instructions, so an invoke's executed-instruction count does
 * not depend on where the SysTick period happens to fall in it (QEMU icount,
 * tests/test_qemu_e2e.py). Both values are below 2^24, so their difference is negative
 * exactly when the counter wrapped. One struct, so a read addresses both from one base. */
typedef struct {
    uint32_t last;  /* the up-count at the previous read */
    uint32_t wraps; /* periods completed */
} th_systick_count;

static inline uint64_t th_systick_extend(th_systick_count *c, uint32_t up)
{
    c->wraps += (up - c->last) >> 31;
    c->last = up;
    return ((uint64_t)c->wraps << 24) | up;
}

/* Boards built with TH_BOARD_HW_INIT=1 (boards/common/stm32_board.cmake) define this in their
 * folder: clock tree (drivers/clock_<driver>.c: th_clock_hw_init) and UART pin muxing. */
void th_board_hw_init(void);
void th_clock_hw_init(void);

/* Used by fault handlers: write to semihosting console and UART. */
void th_report(const char *s);
void th_report_hex(const char *label, uint32_t v);

#endif
