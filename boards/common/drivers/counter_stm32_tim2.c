/*
 * STM32 TIM2 (32-bit) as free-running counter. On QEMU the timer clock is
 * 1 GHz of virtual time, so with prescaler 0 under
 * -icount shift=0,align=off,sleep=off it counts exactly one per executed
 * instruction (measured, ARCHITECTURE.md §4.10).
 */
#include "th_board.h"
#include "th_board_internal.h"

#define TIM2_BASE 0x40000000u
#define TIM2_CR1 TH_REG32(TIM2_BASE + 0x00u)
#define TIM2_EGR TH_REG32(TIM2_BASE + 0x14u)
#define TIM2_CNT TH_REG32(TIM2_BASE + 0x24u)
#define TIM2_PSC TH_REG32(TIM2_BASE + 0x28u)
#define TIM2_ARR TH_REG32(TIM2_BASE + 0x2Cu)
#define RCC_APB1ENR TH_REG32(0x40023840u)

static uint32_t tim2_last;
static uint64_t tim2_high;

void th_counter_hw_init(void)
{
    RCC_APB1ENR |= 1u << 0; /* TIM2 clock (hardware; QEMU ignores) */
    TIM2_CR1 = 0u;
    TIM2_PSC = 0u;
    TIM2_ARR = 0xFFFFFFFFu;
    TIM2_EGR = 1u; /* UG: load PSC, reset CNT */
    TIM2_CR1 = 1u; /* CEN */
    tim2_last = 0u;
    tim2_high = 0u;
}

uint64_t th_counter_read(void)
{
    uint32_t c = TIM2_CNT;
    if (c < tim2_last) {
        tim2_high += 1ull << 32;
    }
    tim2_last = c;
    return tim2_high | c;
}
