/*
 * SysTick as a coarse free-running counter (MPS2/MPS3 on QEMU: DWT CYCCNT
 * reads 0 there). The 24-bit down-counter is turned into an up-count and
 * extended to 64 bits by noticing when it goes backwards (th_systick_extend), so no interrupt
 * perturbs instruction counts. (COUNTFLAG is not used: it is set when the
 * counter reaches 0, one tick before the period really ends.)
 */
#include "th_board.h"
#include "th_board_internal.h"

#define SYST_CSR TH_REG32(0xE000E010u)
#define SYST_RVR TH_REG32(0xE000E014u)
#define SYST_CVR TH_REG32(0xE000E018u)

#define CSR_ENABLE (1u << 0)
#define CSR_CLKSOURCE (1u << 2)
#define SYST_MAX 0x00FFFFFFu

static th_systick_count systick;

void th_counter_hw_init(void)
{
    SYST_CSR = 0u;
    SYST_RVR = SYST_MAX;
    SYST_CVR = 0u; /* any write clears the counter */
    SYST_CSR = CSR_CLKSOURCE | CSR_ENABLE;
    systick.last = SYST_MAX - (SYST_CVR & SYST_MAX);
    systick.wraps = 0u;
}

uint64_t th_counter_read(void)
{
    return th_systick_extend(&systick, SYST_MAX - (SYST_CVR & SYST_MAX));
}
