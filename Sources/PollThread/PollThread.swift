// PollThread: the two primitives every OS binding of msgpipe runs its poll loops on: a detached POSIX thread
// (`DetachedThread`) and the self-pipe that wakes its `poll(2)` (`WakePipe`). BLELink's bearers and mgmt
// readers and SDBus's bus thread share them; nothing else here, and no Bluetooth or D-Bus knowledge.
