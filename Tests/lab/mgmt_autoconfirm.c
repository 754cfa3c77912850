/* mgmt_autoconfirm.c - lab pairing agent: accepts every mgmt User Confirmation Request (and answers
 * passkey requests with 000000) on all controllers, so BT_SECURITY_MEDIUM works without bluetoothd.
 * Built by Scripts/blelab.sh --setup; runs in the lab VM when BLELAB_AUTOCONFIRM=1. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
int main(void)
{
	struct sockaddr_hci a;
	uint8_t buf[1024], rep[17];
	char s[18];
	bdaddr_t ba;
	int fd = socket(PF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
	if (fd < 0) { perror("socket"); return 1; }
	memset(&a, 0, sizeof(a));
	a.hci_family = AF_BLUETOOTH;
	a.hci_dev = HCI_DEV_NONE;
	a.hci_channel = HCI_CHANNEL_CONTROL;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("bind"); return 1; }
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 6) { if (n < 0) perror("read"); return 1; }
		uint16_t ev = buf[0] | buf[1] << 8, len = buf[4] | buf[5] << 8;
		if ((ev != 0x000F && ev != 0x0010) || len < 7)
			continue;      /* 0x0F user confirm request, 0x10 passkey request */
		memcpy(&ba, buf + 6, 6);
		ba2str(&ba, s);
		printf("hci%u: %s request from %s (type %u) -> accept\n", buf[2] | buf[3] << 8,
		       ev == 0x0F ? "confirm" : "passkey", s, buf[12]);
		rep[0] = ev == 0x0F ? 0x1C : 0x1E; rep[1] = 0;  /* USER_CONFIRM_REPLY / USER_PASSKEY_REPLY */
		rep[2] = buf[2]; rep[3] = buf[3];
		rep[4] = ev == 0x0F ? 7 : 11; rep[5] = 0;
		memcpy(rep + 6, buf + 6, 7);             /* bdaddr + address type */
		memset(rep + 13, 0, 4);                  /* passkey 000000 */
		if (write(fd, rep, 6 + rep[4]) < 0) perror("write");
	}
}
