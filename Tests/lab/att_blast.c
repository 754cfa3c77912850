/* att_blast.c - the lab's raw-socket goodput baseline: the least a sender can do over the kernel's LE ATT
 * channel (CID 4). msgpipe's goodput is reported against it (Scripts/lab-test.sh).
 *
 *   att_blast sink <local-bdaddr>                      accept one central; answer Exchange MTU (247) and
 *                                                       Write Requests; count Write Command bytes
 *   att_blast send <local-bdaddr> <remote-bdaddr> <bytes>
 *       connect, Exchange MTU 247, send <bytes> as Write Commands of MTU-3 bytes to handle 0x0003, then one
 *       Write Request; its response proves every command arrived. Prints "goodput N bytes/s".
 * Build: gcc -O2 -Wall -o att_blast att_blast.c -lbluetooth
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/l2cap.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int att_socket(const char *local)
{
	struct sockaddr_l2 a;
	int fd = socket(PF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP);
	if (fd < 0) { perror("socket"); exit(1); }
	memset(&a, 0, sizeof(a));
	a.l2_family = AF_BLUETOOTH;
	a.l2_cid = htobs(4);
	a.l2_bdaddr_type = BDADDR_LE_PUBLIC;
	str2ba(local, &a.l2_bdaddr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("bind"); exit(1); }
	return fd;
}

static int sink(const char *local)
{
	uint8_t buf[1024];
	long long bytes = 0, commands = 0;
	double first = 0, last = 0;
	int srv = att_socket(local), fd;
	if (listen(srv, 1) < 0) { perror("listen"); return 1; }
	printf("att_blast: sink listening on %s\n", local);
	fd = accept(srv, NULL, NULL);
	if (fd < 0) { perror("accept"); return 1; }
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0) break;
		if (buf[0] == 0x52 && n >= 3) {
			if (!commands) first = now();
			last = now();
			commands++;
			bytes += n - 3;
		} else if (buf[0] == 0x02) {
			uint8_t rsp[3] = { 0x03, 247, 0 };
			send(fd, rsp, 3, 0);
		} else if (buf[0] == 0x12) {
			uint8_t rsp[1] = { 0x13 };
			send(fd, rsp, 1, 0);
		}
	}
	printf("att_blast: sink got %lld bytes in %lld write commands over %.3f s\n", bytes, commands, last - first);
	close(fd);
	close(srv);
	return 0;
}

static int blast(const char *local, const char *remote, long long total)
{
	struct sockaddr_l2 a;
	uint8_t buf[600], rsp[64];
	int fd = att_socket(local), mtu = 23;
	long long sent = 0;
	double t0, t1;
	struct pollfd p = { .events = POLLIN };

	memset(&a, 0, sizeof(a));
	a.l2_family = AF_BLUETOOTH;
	a.l2_cid = htobs(4);
	a.l2_bdaddr_type = BDADDR_LE_PUBLIC;
	str2ba(remote, &a.l2_bdaddr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("connect"); return 1; }
	p.fd = fd;
	buf[0] = 0x02; buf[1] = 247; buf[2] = 0;
	send(fd, buf, 3, 0);
	if (poll(&p, 1, 10000) == 1 && recv(fd, rsp, sizeof(rsp), 0) == 3 && rsp[0] == 0x03)
		mtu = (rsp[1] | rsp[2] << 8) < 247 ? (rsp[1] | rsp[2] << 8) : 247;
	printf("att_blast: connected, ATT_MTU %d\n", mtu);
	t0 = now();
	buf[0] = 0x52; buf[1] = 0x03; buf[2] = 0x00;
	while (sent < total) {
		int chunk = total - sent < mtu - 3 ? (int)(total - sent) : mtu - 3;
		memset(buf + 3, (int)(sent & 0xff), chunk);
		if (send(fd, buf, 3 + chunk, 0) < 0) { perror("send"); return 1; }
		sent += chunk;
	}
	buf[0] = 0x12;
	send(fd, buf, 4, 0);
	for (;;) {
		if (poll(&p, 1, 60000) != 1) { fprintf(stderr, "att_blast: no Write Response\n"); return 1; }
		if (recv(fd, rsp, sizeof(rsp), 0) <= 0) { perror("recv"); return 1; }
		if (rsp[0] == 0x13) break;
	}
	t1 = now();
	printf("att_blast: sent %lld bytes in %.3f s: goodput %.0f bytes/s\n", sent, t1 - t0, sent / (t1 - t0));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "sink"))
		return sink(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "send"))
		return blast(argv[2], argv[3], atoll(argv[4]));
	fprintf(stderr, "usage: %s sink LOCAL | send LOCAL REMOTE BYTES\n", argv[0]);
	return 2;
}
