import CMalloc
import CofferCLI

// Large buffers (a backup's records, ids and tables: tens of MB each) get mappings of their own,
// given back to the system when freed. glibc otherwise raises this threshold to 32 MiB after the
// first such free and serves later ones from its heap, which keeps what is freed: a 1M-record
// backup then peaks about 20 MB higher (BENCHMARKS.md).
_ = coffer_map_allocations_from(256 << 10)

Coffer.runAndExit()
