/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/i8042.h"

#include <string.h>

#include "minivmm_abi.h"

#define STATUS_OUT_FULL  0x01
#define STATUS_SYSFLAG   0x04
#define STATUS_CMD_DATA  0x08   /* last write went to the command port */

#define CMD_READ_CTR     0x20
#define CMD_WRITE_CTR    0x60
#define CMD_DISABLE_AUX  0xa7
#define CMD_ENABLE_AUX   0xa8
#define CMD_TEST_AUX     0xa9
#define CMD_SELF_TEST    0xaa
#define CMD_TEST_KBD     0xab
#define CMD_DISABLE_KBD  0xad
#define CMD_ENABLE_KBD   0xae
#define CMD_WRITE_AUX    0xd4
#define CMD_PULSE_RESET  0xfe

#define SELF_TEST_OK     0x55
#define PORT_TEST_OK     0x00

void i8042_init(struct i8042 *k, const struct machine *ev)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	k->ev = ev;
	k->ctr = 0x30;   /* both ports disabled, no interrupts */
}

void i8042_destroy(struct i8042 *k)
{
	pthread_mutex_destroy(&k->lock);
}

static void i8042_output(struct i8042 *k, uint8_t byte)
{
	k->out_byte = byte;
	k->out_full = true;
}

static void i8042_command(struct i8042 *k, uint8_t cmd)
{
	switch (cmd) {
	case CMD_READ_CTR:
		i8042_output(k, k->ctr);
		break;
	case CMD_WRITE_CTR:
	case CMD_WRITE_AUX:
		k->pending_cmd = cmd;
		break;
	case CMD_SELF_TEST:
		i8042_output(k, SELF_TEST_OK);
		break;
	case CMD_TEST_KBD:
	case CMD_TEST_AUX:
		i8042_output(k, PORT_TEST_OK);
		break;
	case CMD_PULSE_RESET:
		machine_stop(k->ev, MINIVMM_EXIT_OK, "guest reset through the i8042");
		break;
	default:
		break;   /* enable/disable ports and the rest: nothing behind them */
	}
}

static void i8042_data_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct i8042 *k = opaque;
	(void)off;
	memset(data, 0, len);
	pthread_mutex_lock(&k->lock);
	data[0] = k->out_byte;
	k->out_full = false;
	pthread_mutex_unlock(&k->lock);
}

static void i8042_data_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct i8042 *k = opaque;
	(void)off;
	(void)len;
	pthread_mutex_lock(&k->lock);
	if (k->pending_cmd == CMD_WRITE_CTR)
		k->ctr = data[0];
	/* Bytes for the (absent) keyboard or mouse are dropped. */
	k->pending_cmd = 0;
	pthread_mutex_unlock(&k->lock);
}

static void i8042_status_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct i8042 *k = opaque;
	(void)off;
	memset(data, 0, len);
	pthread_mutex_lock(&k->lock);
	data[0] = STATUS_SYSFLAG | (k->out_full ? STATUS_OUT_FULL : 0) |
		  (k->pending_cmd ? STATUS_CMD_DATA : 0);
	pthread_mutex_unlock(&k->lock);
}

static void i8042_command_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct i8042 *k = opaque;
	(void)off;
	(void)len;
	pthread_mutex_lock(&k->lock);
	i8042_command(k, data[0]);
	pthread_mutex_unlock(&k->lock);
}

struct bus_device i8042_data_port(struct i8042 *k)
{
	return (struct bus_device){ .name = "i8042-data", .opaque = k,
				    .read = i8042_data_read, .write = i8042_data_write };
}

struct bus_device i8042_command_port(struct i8042 *k)
{
	return (struct bus_device){ .name = "i8042-cmd", .opaque = k,
				    .read = i8042_status_read, .write = i8042_command_write };
}
