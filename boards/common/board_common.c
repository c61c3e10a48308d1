/*
 * Board-independent parts of the board API, compiled for every board
 * (Cortex-M and host): names, units and number formatting.
 */
#include <string.h>

#include "th_board.h"

/* The compiler flags derived from board.json must deliver what it promises
 * (e.g. gcc's -mcpu=cortex-m55 with -mfloat-abi=hard enables MVE). */
#if defined(TH_BOARD_MVE) && TH_BOARD_MVE && !defined(__ARM_FEATURE_MVE)
#error "board.json says mve, but the compiler flags do not enable MVE"
#endif
#if defined(TH_BOARD_DSP) && TH_BOARD_DSP && !defined(__ARM_FEATURE_DSP)
#error "board.json says dsp, but the compiler flags do not enable the DSP extension"
#endif

#ifndef TH_COUNTER_UNIT
#define TH_COUNTER_UNIT "unknown"
#endif
#ifndef TH_COUNTER_HZ
#define TH_COUNTER_HZ 1000000000ull
#endif

const char *th_board_name(void)
{
    return TH_BOARD_NAME;
}

/* A counter driver that decides its unit at run time (counter_dwt.c: DWT cycles on hardware,
 * SysTick where the DWT does not count, e.g. under Renode) defines these two itself. */
#if !(defined(TH_COUNTER_UNIT_RUNTIME) && TH_COUNTER_UNIT_RUNTIME)
const char *th_counter_unit(void)
{
    return TH_COUNTER_UNIT;
}

uint64_t th_counter_hz(void)
{
    return (uint64_t)TH_COUNTER_HZ;
}
#endif

void th_uart_puts(const char *s)
{
    th_uart_write((const uint8_t *)s, strlen(s));
}

size_t th_fmt_u64(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    for (size_t i = 0; i < n; i++) {
        buf[i] = tmp[n - 1 - i];
    }
    buf[n] = '\0';
    return n;
}
