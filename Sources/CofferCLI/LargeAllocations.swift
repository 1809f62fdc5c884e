import CMalloc

/// For the commands that hold a large vault's records, ids and tables at once (tens of MB each,
/// made and freed in turn): `backup create`, `backup verify`, `restore`.
enum LargeAllocations {
    /// Gives each allocation of 256 KiB or more a mapping of its own, returned to the system when
    /// freed. glibc otherwise raises that threshold to 32 MiB after the first such free and serves
    /// later ones from its heap, which keeps what is freed: a 1M-record backup then peaks about
    /// 15 MB higher (BENCHMARKS.md). Not for every command: a bulk import, which makes and frees
    /// such buffers over and over, is 12–15 % slower with it, and `backup verify --full` (which
    /// holds no vault) 5 % slower.
    static func mapped() {
        _ = coffer_map_allocations_from(256 << 10)
    }
}
