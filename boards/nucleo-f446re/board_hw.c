/*
 * Board init before the UART and counter come up: clock tree (drivers/clock_stm32f4.c), then
 * USART2 on PA2 (TX) / PA3 (RX), alternate function 7 (STM32F4 datasheets, Table "Alternate
 * function mapping"). USART2's own clock is enabled by drivers/uart_stm32.c.
 */
#include "drivers/stm32_gpio.h"
#include "th_board_internal.h"

#define RCC_AHB1ENR TH_REG32(0x40023830u) /* RM0090 §7.3.10, RM0390 §6.3.10 */
#define RCC_AHB1ENR_GPIOAEN (1u << 0)
#define GPIOA_BASE 0x40020000u
#define AF7_USART2 7u

void th_board_hw_init(void)
{
    th_clock_hw_init();
    RCC_AHB1ENR |= RCC_AHB1ENR_GPIOAEN;
    (void)RCC_AHB1ENR; /* clock enable takes effect before the port is written */
    th_stm32_gpio_af(GPIOA_BASE, 2u, AF7_USART2, 0);
    th_stm32_gpio_af(GPIOA_BASE, 3u, AF7_USART2, 1);
}
