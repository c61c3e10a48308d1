/*
 * Board init before the UART and counter come up: clock tree (drivers/clock_stm32l4r5.c),
 * then LPUART1 - the ST-LINK virtual COM port on NUCLEO-L4R5ZI (UM2179 §6.9) - on PG7 (TX) /
 * PG8 (RX), alternate function 8. PG2..PG15 are powered from VDDIO2, which must be declared
 * valid first (PWR_CR2.IOSV, RM0432 §5.4.2) or the pins stay unpowered.
 */
#include "drivers/stm32_gpio.h"
#include "th_board_internal.h"

#define RCC_AHB2ENR TH_REG32(0x4002104Cu) /* RM0432 §6.4.17 */
#define RCC_AHB2ENR_GPIOGEN (1u << 6)
#define RCC_APB1ENR1 TH_REG32(0x40021058u) /* RM0432 §6.4.19 */
#define RCC_APB1ENR1_PWREN (1u << 28)
#define RCC_APB1ENR2 TH_REG32(0x4002105Cu) /* RM0432 §6.4.20 */
#define RCC_APB1ENR2_LPUART1EN (1u << 0)
#define PWR_CR2 TH_REG32(0x40007004u)
#define PWR_CR2_IOSV (1u << 9)
#define GPIOG_BASE 0x48001800u
#define AF8_LPUART1 8u

void th_board_hw_init(void)
{
    th_clock_hw_init();
    RCC_APB1ENR1 |= RCC_APB1ENR1_PWREN;
    (void)RCC_APB1ENR1;
    PWR_CR2 |= PWR_CR2_IOSV;
    RCC_AHB2ENR |= RCC_AHB2ENR_GPIOGEN;
    RCC_APB1ENR2 |= RCC_APB1ENR2_LPUART1EN;
    (void)RCC_APB1ENR2; /* clock enables take effect before the peripherals are written */
    th_stm32_gpio_af(GPIOG_BASE, 7u, AF8_LPUART1, 0);
    th_stm32_gpio_af(GPIOG_BASE, 8u, AF8_LPUART1, 1);
}
