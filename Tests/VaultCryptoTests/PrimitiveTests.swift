import Foundation
import Testing
import VaultCrypto

@Suite struct KeyDerivationLimits {
    @Test(arguments: [
        (UInt64(0), UInt64(67108864)),  // no passes
        (UInt64(65), UInt64(67108864)),  // absurd pass count: would hang
        (UInt64(2), UInt64(4096)),  // below libsodium's 8 KiB minimum
        (UInt64(2), (UInt64(4) << 30) + 1),  // over 4 GiB: a crafted header must not allocate it
        (UInt64(2), UInt64.max),
    ])
    func refusesParametersOutsideTheSafeRange(ops: UInt64, mem: UInt64) {
        #expect(throws: CryptoError(.unsafeParameters, "")) { try Argon2idParameters(opsLimit: ops, memLimit: mem) }
    }

    @Test func acceptsTheNamedProfiles() throws {
        #expect(KDFProfile.interactive.parameters == (try Argon2idParameters(opsLimit: 2, memLimit: 64 << 20)))
        #expect(KDFProfile.moderate.parameters == (try Argon2idParameters(opsLimit: 3, memLimit: 256 << 20)))
        #expect(KDFProfile.sensitive.parameters == (try Argon2idParameters(opsLimit: 4, memLimit: 1 << 30)))
        #expect(try Argon2idParameters(opsLimit: 4, memLimit: 4 << 30).profile == nil)
    }

    @Test func refusesEmptyAndNonUTF8Passphrases() {
        #expect(throws: CryptoError(.invalidPassphrase, "")) { try Passphrase("") }
        #expect(throws: CryptoError(.invalidPassphrase, "")) { try Passphrase(utf8Bytes: [0x66, 0xff, 0xfe]) }
    }
}

@Suite struct SecretHandling {
    @Test func secretsNeverPrint() throws {
        let secret = SecureBytes(copying: Array("CANARY-SECRET-BYTES".utf8))
        let aKey = SymmetricKey.random()
        let passphrase = try Passphrase("CANARY-PASSPHRASE")
        for text in [
            String(describing: secret), String(reflecting: secret), String(describing: aKey),
            String(reflecting: aKey), String(describing: passphrase), String(reflecting: passphrase),
        ] {
            #expect(!text.contains("CANARY"))
            #expect(text.contains("redacted"))
            #expect(!aKey.withUnsafeBytes { text.contains(hex($0)) })
        }
        // Reflection (dump, debuggers' summaries) finds nothing inside either.
        #expect(Mirror(reflecting: aKey).children.isEmpty)
        #expect(Mirror(reflecting: secret).children.isEmpty)
        #expect(Mirror(reflecting: passphrase).children.isEmpty)
    }

    @Test func constantTimeComparison() {
        let a = SecureBytes(copying: [1, 2, 3, 4])
        #expect(a.constantTimeEquals(SecureBytes(copying: [1, 2, 3, 4])))
        #expect(!a.constantTimeEquals(SecureBytes(copying: [1, 2, 3, 5])))
        #expect(!a.constantTimeEquals(SecureBytes(copying: [1, 2, 3])))
    }

    @Test func subkeysAreIndependent() {
        let master = SymmetricKey.random()
        let context = KDFContext("CofferV1")
        let one = master.deriveSubkey(id: 1, context: context)
        #expect(one.constantTimeEquals(master.deriveSubkey(id: 1, context: context)))
        #expect(!one.constantTimeEquals(master.deriveSubkey(id: 2, context: context)))
        #expect(!one.constantTimeEquals(master.deriveSubkey(id: 1, context: KDFContext("OtherCtx"))))
        #expect(!one.constantTimeEquals(master))
    }

    @Test func coreDumpsCanBeDisabled() {
        #expect(ProcessHardening.disableCoreDumps())
        #expect(ProcessHardening.isDumpable == false)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        #expect(limit.rlim_cur == 0 && limit.rlim_max == 0)
    }
}

@Suite struct PaddingTests {
    @Test(arguments: [0, 1, 63, 64, 65, 200])
    func padsToWholeBlocksAndBack(length: Int) throws {
        let payload = [UInt8](repeating: 7, count: length)
        let padded = Padding.pad(payload, blockSize: 64)
        #expect(padded.count % 64 == 0 && padded.count > length)
        #expect(padded.count == (length / 64 + 1) * 64)
        // ISO/IEC 7816-4, byte for byte as `sodium_pad` writes it: the payload, 0x80, then zeros.
        #expect(padded == payload + [0x80] + [UInt8](repeating: 0, count: padded.count - length - 1))
        #expect(try padded.withUnsafeBytes { try Padding.unpaddedLength(of: $0, blockSize: 64) } == length)
    }

    @Test func rejectsMalformedPadding() {
        let zeros = [UInt8](repeating: 0, count: 64)
        #expect(throws: CryptoError(.invalidPadding, "")) {
            try zeros.withUnsafeBytes { try Padding.unpaddedLength(of: $0, blockSize: 64) }
        }
        let short = [UInt8](repeating: 0x80, count: 10)
        #expect(throws: CryptoError(.invalidPadding, "")) {
            try short.withUnsafeBytes { try Padding.unpaddedLength(of: $0, blockSize: 64) }
        }
        // The marker must be in the final block, followed only by zeros.
        for malformed in [
            [0x80] + [UInt8](repeating: 0, count: 127), [UInt8](repeating: 1, count: 64),
            [UInt8](repeating: 0, count: 62) + [0x80, 1],
        ] {
            #expect(throws: CryptoError(.invalidPadding, "")) {
                try malformed.withUnsafeBytes { try Padding.unpaddedLength(of: $0, blockSize: 64) }
            }
        }
    }
}

@Suite struct SecretStreamTests {
    func encrypt(_ chunks: [[UInt8]], key: SymmetricKey) throws -> (header: [UInt8], chunks: [Data]) {
        let encryptor = SecretStreamEncryptor(key: key)
        let sealed = try chunks.enumerated().map { index, chunk in
            try encryptor.push(chunk, isFinal: index == chunks.count - 1)
        }
        return (encryptor.header, sealed)
    }

    @Test func roundTripsAndMarksTheEnd() throws {
        let streamKey = SymmetricKey.random()
        let chunks: [[UInt8]] = [Array("one".utf8), Array("two".utf8), Array("three".utf8)]
        let (header, sealed) = try encrypt(chunks, key: streamKey)
        let decryptor = try SecretStreamDecryptor(key: streamKey, header: header)
        for (index, chunk) in sealed.enumerated() {
            #expect(Array(try decryptor.pull(chunk)) == chunks[index])
            #expect(decryptor.isFinished == (index == chunks.count - 1))
        }
    }

    /// Decrypted into a caller's buffer, chunk after chunk: the same plaintext, placed one after
    /// another; a buffer too short for a chunk is refused before anything is written to it, and
    /// a chunk that does not authenticate is refused as by `pull`.
    @Test func decryptsIntoOneBufferChunkAfterChunk() throws {
        let streamKey = SymmetricKey.random()
        let chunks: [[UInt8]] = [Array(repeating: 7, count: 100), Array("two".utf8), []]
        let (header, sealed) = try encrypt(chunks, key: streamKey)
        let decryptor = try SecretStreamDecryptor(key: streamKey, header: header)
        // One spare byte at the end, which nothing may write.
        var gathered = [UInt8](repeating: 0xEE, count: 104)
        var filled = 0
        try gathered.withUnsafeMutableBytes { buffer in
            #expect(throws: CryptoError(.invalidLength, "")) {
                try sealed[0].withUnsafeBytes {
                    try decryptor.pull($0, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<99]))
                }
            }
            #expect(buffer.allSatisfy { $0 == 0xEE })
            for chunk in sealed {
                filled += try chunk.withUnsafeBytes {
                    try decryptor.pull($0, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                }
                #expect(buffer[filled...].allSatisfy { $0 == 0xEE })
            }
        }
        #expect(filled == 103 && Array(gathered[..<103]) == chunks.flatMap { $0 } && decryptor.isFinished)
        var altered = sealed[1]
        altered[0] ^= 1
        let again = try SecretStreamDecryptor(key: streamKey, header: header)
        let room = UnsafeMutableRawBufferPointer.allocate(byteCount: 200, alignment: 1)
        defer { room.deallocate() }
        _ = try sealed[0].withUnsafeBytes { try again.pull($0, into: room) }
        #expect(throws: CryptoError(.authenticationFailed, "")) {
            try altered.withUnsafeBytes { try again.pull($0, into: room) }
        }
    }

    @Test func detectsTruncationReorderingTamperingAndExtraChunks() throws {
        let streamKey = SymmetricKey.random()
        let (header, sealed) = try encrypt([[1], [2], [3]], key: streamKey)

        // Truncated: every chunk authenticates, but the stream never reaches its final tag.
        let truncated = try SecretStreamDecryptor(key: streamKey, header: header)
        _ = try truncated.pull(sealed[0])
        _ = try truncated.pull(sealed[1])
        #expect(!truncated.isFinished)

        let reordered = try SecretStreamDecryptor(key: streamKey, header: header)
        #expect(throws: CryptoError(.authenticationFailed, "")) { try reordered.pull(sealed[1]) }

        var altered = sealed[0]
        altered[altered.count - 1] ^= 1
        #expect(throws: CryptoError(.authenticationFailed, "")) {
            try SecretStreamDecryptor(key: streamKey, header: header).pull(altered)
        }

        let extra = try SecretStreamDecryptor(key: streamKey, header: header)
        for chunk in sealed { _ = try extra.pull(chunk) }
        #expect(throws: CryptoError(.streamState, "")) { try extra.pull(sealed[2]) }

        #expect(throws: CryptoError(.authenticationFailed, "")) {
            try SecretStreamDecryptor(key: .random(), header: header).pull(sealed[0])
        }
    }
}
