/*
 * Cortex-M implementation of the generic board API on top of the drivers
 * chosen by board.json (boards/common/drivers/).
 */
#include "th_board.h"
#include "th_board_internal.h"

void th_board_init(void)
{
#if defined(TH_BOARD_HW_INIT) && TH_BOARD_HW_INIT
    /* Real-hardware boards: clocks and UART pins first (boards/<name>/board_hw.c); the UART
     * baud divider and the counter rate assume the clock it sets up. */
    th_board_hw_init();
#endif
    th_counter_hw_init();
    th_uart_hw_init();
}

void th_uart_write(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        th_uart_hw_putc(buf[i]);
    }
}

int th_uart_read_byte(uint8_t *out, uint32_t timeout_ms)
{
    if (th_uart_hw_poll(out)) {
        return 1;
    }
    if (timeout_ms == 0u) {
        return 0;
    }
    /* Under -icount the counter advances with executed instructions, so
     * this timeout is in virtual time, which keeps runs deterministic. */
    const uint64_t start = th_counter_read();
    const uint64_t limit = (timeout_ms == TH_WAIT_FOREVER)
                               ? UINT64_MAX
                               : (uint64_t)timeout_ms * (th_counter_hz() / 1000u);
    for (;;) {
        if (th_uart_hw_poll(out)) {
            return 1;
        }
        if (th_counter_read() - start >= limit) {
            return 0;
        }
    }
}

void th_report(const char *s)
{
    th_sh_puts(s);
    th_uart_puts(s);
}

void th_report_hex(const char *label, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    char line[32];
    size_t n = 0;
    while (*label != '\0' && n < 16u) {
        line[n++] = *label++;
    }
    line[n++] = '=';
    line[n++] = '0';
    line[n++] = 'x';
    for (int shift = 28; shift >= 0; shift -= 4) {
        line[n++] = digits[(v >> shift) & 0xFu];
    }
    line[n++] = '\n';
    line[n] = '\0';
    th_report(line);
}

/* Stack bounds from boards/common/th_sections.ld. */
extern uint32_t __stack_limit__;
extern uint32_t __stack_top__;

#define TH_STACK_PAINT 0xA5C3A5C3u
/* Left unpainted below the caller's stack pointer: the frames of th_stack_paint itself. */
#define TH_STACK_PAINT_GUARD 64u

static uintptr_t stack_pointer(void)
{
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

void th_stack_paint(void)
{
    volatile uint32_t *w = &__stack_limit__;
    const uintptr_t end = stack_pointer() - TH_STACK_PAINT_GUARD;
    while ((uintptr_t)w < end) {
        *w++ = TH_STACK_PAINT;
    }
}

uint32_t th_stack_size(void)
{
    return (uint32_t)((uintptr_t)&__stack_top__ - (uintptr_t)&__stack_limit__);
}

uint32_t th_stack_peak(void)
{
    const volatile uint32_t *w = &__stack_limit__;
    const uintptr_t top = (uintptr_t)&__stack_top__;
    while ((uintptr_t)w < top && *w == TH_STACK_PAINT) {
        w++;
    }
    return (uint32_t)(top - (uintptr_t)w);
}
