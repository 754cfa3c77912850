// Framing: packets <-> messages for every wire format msgpipe speaks. Pure Swift, no I/O.
