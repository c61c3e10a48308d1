/*
 * Board init before the UART and counter come up: clock tree and L1 caches
 * (drivers/clock_stm32f7.c), then USART1 - the ST-LINK virtual COM port on this board - on
 * PA9 (TX) / PB7 (RX), alternate function 7 (STM32F746NG datasheet, Table 12; UM1907 §6.13).
 */
#include "drivers/stm32_gpio.h"
#include "th_board_internal.h"

#define RCC_AHB1ENR TH_REG32(0x40023830u) /* RM0385 §5.3.10 */
#define RCC_AHB1ENR_GPIOAEN (1u << 0)
#define RCC_AHB1ENR_GPIOBEN (1u << 1)
#define RCC_APB2ENR TH_REG32(0x40023844u) /* RM0385 §5.3.14 */
#define RCC_APB2ENR_USART1EN (1u << 4)
#define GPIOA_BASE 0x40020000u
#define GPIOB_BASE 0x40020400u
#define AF7_USART1 7u

void th_board_hw_init(void)
{
    th_clock_hw_init();
    RCC_AHB1ENR |= RCC_AHB1ENR_GPIOAEN | RCC_AHB1ENR_GPIOBEN;
    RCC_APB2ENR |= RCC_APB2ENR_USART1EN;
    (void)RCC_APB2ENR; /* clock enables take effect before the peripherals are written */
    th_stm32_gpio_af(GPIOA_BASE, 9u, AF7_USART1, 0);
    th_stm32_gpio_af(GPIOB_BASE, 7u, AF7_USART1, 1);
}
