/* STM32L4/L4+ LPUART1: the USART v2 driver with the LPUART baud-rate formula. */
#define TH_UART_LPUART 1
#include "uart_stm32v2.c"
