/*
 * DWT CYCCNT (Cortex-M3/M4/M7) as the free-running counter: core clock cycles on real
 * hardware. Never select it for QEMU boards: CYCCNT reads 0 on every QEMU machine (ARCHITECTURE.md §4.10).
 *
 * Where the DWT does not count (Renode tags it on its STM32F7 platform) th_counter_hw_init
 * notices and falls back to SysTick on the processor clock, reporting the unit "systick";
 * tinyhost.deploy.renode sets the emulated SysTick rate to the board clock, so th_counter_hz()
 * is the board clock either way. The unit is decided at run time, hence this driver defines
 * th_counter_unit()/th_counter_hz() (built with TH_COUNTER_UNIT_RUNTIME=1).
 */
#include "th_board.h"
#include "th_board_internal.h"

/* ARMv7-M ARM, C1.6.5 DEMCR: TRCENA (bit 24) powers the DWT and ITM. */
#define DEMCR TH_REG32(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)
/* ARMv7-M ARM, C1.8.7-C1.8.8: DWT_CTRL.CYCCNTENA (bit 0), DWT_CYCCNT. */
#define DWT_CTRL TH_REG32(0xE0001000u)
#define DWT_CYCCNT TH_REG32(0xE0001004u)
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_NOCYCCNT (1u << 25) /* set when the implementation has no cycle counter */
/* CoreSight lock access register: Cortex-M7 ignores DWT writes until unlocked. */
#define DWT_LAR TH_REG32(0xE0001FB0u)
#define DWT_LAR_KEY 0xC5ACCE55u

/* ARMv7-M ARM, B3.3: SysTick (fallback). */
#define SYST_CSR TH_REG32(0xE000E010u)
#define SYST_RVR TH_REG32(0xE000E014u)
#define SYST_CVR TH_REG32(0xE000E018u)
#define CSR_ENABLE (1u << 0)
#define CSR_CLKSOURCE (1u << 2) /* processor clock */
#define SYST_MAX 0x00FFFFFFu

#ifndef TH_COUNTER_HZ
#error "TH_COUNTER_HZ (the core clock) must come from board.json"
#endif

static int use_systick;
static uint32_t last;
static uint64_t high;
static th_systick_count systick;

static int dwt_start(void)
{
    DEMCR |= DEMCR_TRCENA;
    DWT_LAR = DWT_LAR_KEY;
    if ((DWT_CTRL & DWT_CTRL_NOCYCCNT) != 0u) {
        return 0;
    }
    DWT_CYCCNT = 0u;
    DWT_CTRL |= DWT_CTRL_CYCCNTENA;
    uint32_t a = DWT_CYCCNT;
    for (volatile uint32_t i = 0; i < 64u; i++) {
    }
    return DWT_CYCCNT != a;
}

void th_counter_hw_init(void)
{
    high = 0u;
    systick.wraps = 0u;
    use_systick = !dwt_start();
    if (use_systick) {
        SYST_CSR = 0u;
        SYST_RVR = SYST_MAX;
        SYST_CVR = 0u; /* any write clears the counter */
        SYST_CSR = CSR_CLKSOURCE | CSR_ENABLE;
        systick.last = SYST_MAX - (SYST_CVR & SYST_MAX);
    } else {
        last = DWT_CYCCNT;
    }
}

uint64_t th_counter_read(void)
{
    if (use_systick) {
        return th_systick_extend(&systick, SYST_MAX - (SYST_CVR & SYST_MAX));
    }
    /* 2^32 cycles is 20-25 s at 168-216 MHz: read at least that often (th_board.h). */
    uint32_t c = DWT_CYCCNT;
    if (c < last) {
        high += 1ull << 32;
    }
    last = c;
    return high | c;
}

const char *th_counter_unit(void)
{
    return use_systick ? "systick" : "cycles";
}

uint64_t th_counter_hz(void)
{
    return (uint64_t)TH_COUNTER_HZ;
}
