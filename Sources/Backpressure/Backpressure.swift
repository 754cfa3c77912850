// Backpressure: the isReady-to-update contract as reusable primitives. Pure Swift, no I/O.
