/* att_hostile.c - a hostile ATT client for the lab: connects to a peripheral's ATT channel (CID 4) and
 * sends malformed, truncated, oversized and out-of-order PDUs plus seeded random bytes, draining whatever
 * comes back, then disconnects. The server under test must neither crash nor wedge: Scripts/lab-test.sh
 * checks it is still alive and serves the next, well-behaved client.
 *   att_hostile <local-bdaddr> <remote-bdaddr> [random-pdus] [seed]
 * Build: gcc -O2 -Wall -o att_hostile att_hostile.c -lbluetooth
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/l2cap.h>

static int replies;

static void drain(int fd, int wait_ms)
{
	uint8_t buf[1024];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	while (poll(&p, 1, wait_ms) == 1 && (p.revents & POLLIN)) {
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0) return;
		replies++;
		wait_ms = 0;
	}
}

static int put(int fd, const uint8_t *pdu, size_t n)
{
	if (send(fd, pdu, n, 0) < 0 && errno != EMSGSIZE) {
		printf("att_hostile: send failed after %d replies: %s (the server may drop us: allowed)\n",
		       replies, strerror(errno));
		return -1;
	}
	drain(fd, 50);
	return 0;
}

int main(int argc, char **argv)
{
	static const uint8_t cases[][24] = {
		{ 1, 0xFF },                                   /* unknown request opcode */
		{ 1, 0x02 },                                   /* Exchange MTU without MTU */
		{ 3, 0x02, 0x00, 0x00 },                       /* MTU 0 */
		{ 3, 0x03, 0x17, 0x00 },                       /* a response sent to the server */
		{ 1, 0x1E },                                   /* confirmation without indication */
		{ 5, 0x04, 0x10, 0x00, 0x01, 0x00 },           /* Find Information start > end */
		{ 5, 0x04, 0x00, 0x00, 0xFF, 0xFF },           /* Find Information start 0 */
		{ 6, 0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00 },     /* Read By Group Type, 1-byte UUID */
		{ 3, 0x0A, 0x00, 0x00 },                       /* Read handle 0 */
		{ 2, 0x0A, 0x01 },                             /* truncated Read */
		{ 3, 0x0C, 0x03, 0x00 },                       /* Read Blob without offset */
		{ 5, 0x12, 0xFF, 0xFF, 0x01, 0x02 },           /* Write Request to a missing handle */
		{ 2, 0x12, 0x03 },                             /* truncated Write Request */
		{ 5, 0x16, 0x03, 0x00, 0xFF, 0xFF },           /* Prepare Write, offset without value */
		{ 2, 0x18, 0x01 },                             /* Execute Write with nothing prepared */
		{ 2, 0x18, 0x07 },                             /* Execute Write, invalid flags */
		{ 1, 0x52 },                                   /* Write Command without handle */
		{ 4, 0xD2, 0x03, 0x00, 0x00 },                 /* Signed Write Command without signature */
		{ 3, 0x1B, 0x03, 0x00 },                       /* a notification sent to the server */
		{ 1, 0x0E },                                   /* Read Multiple without handles */
	};
	struct sockaddr_l2 a;
	uint8_t big[600];
	unsigned seed = argc > 4 ? (unsigned)atoi(argv[4]) : 1;
	int fd, i, randoms = argc > 3 ? atoi(argv[3]) : 200;

	if (argc < 3) { fprintf(stderr, "usage: %s LOCAL REMOTE [random-pdus] [seed]\n", argv[0]); return 2; }
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = socket(PF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP);
	if (fd < 0) { perror("socket"); return 1; }
	memset(&a, 0, sizeof(a));
	a.l2_family = AF_BLUETOOTH;
	a.l2_cid = htobs(4);
	a.l2_bdaddr_type = BDADDR_LE_PUBLIC;
	str2ba(argv[1], &a.l2_bdaddr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("bind"); return 1; }
	str2ba(argv[2], &a.l2_bdaddr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("connect"); return 1; }
	printf("att_hostile: connected to %s\n", argv[2]);

	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++)
		if (put(fd, cases[i] + 1, cases[i][0]) < 0) goto out;
	/* requests back to back without waiting for responses (out of order for a sequential protocol) */
	for (i = 0; i < 20; i++) {
		uint8_t read[3] = { 0x0A, (uint8_t)i, 0x00 };
		if (send(fd, read, 3, 0) < 0) goto out;
	}
	drain(fd, 200);
	/* Write Command and Write Request far over any negotiated ATT_MTU (the socket refuses > 672: skipped) */
	memset(big, 0xAB, sizeof(big));
	big[0] = 0x52; big[1] = 0x03; big[2] = 0x00;
	if (put(fd, big, sizeof(big)) < 0) goto out;
	big[0] = 0x12;
	if (put(fd, big, sizeof(big)) < 0) goto out;
	/* seeded random PDUs */
	srand(seed);
	for (i = 0; i < randoms; i++) {
		uint8_t pdu[64];
		int n = 1 + rand() % (int)sizeof(pdu), k;
		for (k = 0; k < n; k++) pdu[k] = (uint8_t)rand();
		if (send(fd, pdu, n, 0) < 0) goto out;
		if (i % 10 == 0) drain(fd, 20);
	}
	drain(fd, 200);
out:
	printf("att_hostile: done, %d replies, seed %u\n", replies, seed);
	close(fd);
	return 0;
}
