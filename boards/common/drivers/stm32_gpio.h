/*
 * STM32 GPIO alternate-function setup, identical on F4 (RM0090 §8.4), F7 (RM0385 §6.4) and
 * L4+ (RM0432 §8.5). The caller enables the port's clock in RCC first.
 */
#ifndef TH_STM32_GPIO_H
#define TH_STM32_GPIO_H

#include <stdint.h>

#include "th_board_internal.h"

#define GPIO_MODER(base) TH_REG32((base) + 0x00u)
#define GPIO_OSPEEDR(base) TH_REG32((base) + 0x08u)
#define GPIO_PUPDR(base) TH_REG32((base) + 0x0Cu)
#define GPIO_AFR(base, pin) TH_REG32((base) + 0x20u + 4u * ((pin) >> 3))

#define GPIO_MODE_AF 0x2u
#define GPIO_SPEED_HIGH 0x2u
#define GPIO_PULL_UP 0x1u

/* Put `pin` of the port at `base` in alternate function `af`; a pull-up keeps an idle or
 * unconnected RX line high (no spurious start bits). */
static inline void th_stm32_gpio_af(uint32_t base, uint32_t pin, uint32_t af, int pull_up)
{
    uint32_t shift2 = 2u * pin;
    uint32_t shift4 = 4u * (pin & 7u);
    GPIO_AFR(base, pin) = (GPIO_AFR(base, pin) & ~(0xFu << shift4)) | (af << shift4);
    GPIO_OSPEEDR(base) = (GPIO_OSPEEDR(base) & ~(0x3u << shift2)) | (GPIO_SPEED_HIGH << shift2);
    GPIO_PUPDR(base) = (GPIO_PUPDR(base) & ~(0x3u << shift2)) |
                       ((pull_up ? GPIO_PULL_UP : 0u) << shift2);
    GPIO_MODER(base) = (GPIO_MODER(base) & ~(0x3u << shift2)) | (GPIO_MODE_AF << shift2);
}

/* Bounded wait for (reg & mask) == want: clock bring-up never hangs the board forever (a
 * missing crystal, an emulator without that bit); returns 1 on success. */
#define TH_STM32_WAIT_LOOPS 2000000u
static inline int th_stm32_wait(volatile uint32_t *reg, uint32_t mask, uint32_t want)
{
    for (uint32_t i = 0; i < TH_STM32_WAIT_LOOPS; i++) {
        if ((*reg & mask) == want) {
            return 1;
        }
    }
    return 0;
}

#endif
