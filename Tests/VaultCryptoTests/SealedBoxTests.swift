import Foundation
import Testing
import VaultCrypto

/// The nonce ‖ ciphertext ‖ tag box every stored AEAD message uses.
@Suite struct SealedBoxTests {
    /// draft-irtf-cfrg-xchacha-03, appendix A.3.1, laid out as a box: the published nonce,
    /// ciphertext and tag opened through `init(combined:)`.
    @Test func opensTheDraftVectorAsAStoredBox() throws {
        let plaintext = Array(
            "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
                .utf8)
        let aeadKey = key("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
        let nonce = "404142434445464748494a4b4c4d4e4f5051525354555657"
        let ciphertext =
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
            + "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
            + "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
            + "21f9664c97637da9768812f615c68b13b52e"
        let tag = "c0875924c1c7987947deafd8780acf49"
        let ad = bytes("50515253c0c1c2c3c4c5c6c7")
        let box = try XChaCha20Poly1305.SealedBox(combined: bytes(nonce + ciphertext + tag))
        #expect(box.nonce == (try AEADNonce(bytes(nonce))))
        #expect(hex(box.combined) == nonce + ciphertext + tag)
        #expect(Array(try XChaCha20Poly1305.open(box, key: aeadKey, associatedData: ad)) == plaintext)
        #expect(
            try XChaCha20Poly1305.openSecret(box, key: aeadKey, associatedData: ad).withUnsafeBytes { Array($0) }
                == plaintext)
    }

    /// Sealing draws a fresh nonce each time, and the combined bytes are exactly the nonce, then
    /// what sealing under that nonce by hand gives: the stored layout did not change.
    @Test func sealsUnderAFreshNonceInTheStoredLayout() throws {
        let aeadKey = SymmetricKey.random()
        let plaintext = Array("the same message".utf8), ad = Array("context".utf8)
        let first = XChaCha20Poly1305.seal(plaintext, key: aeadKey, associatedData: ad)
        let second = XChaCha20Poly1305.seal(plaintext, key: aeadKey, associatedData: ad)
        #expect(first.nonce != second.nonce)
        #expect(first.combined != second.combined)
        #expect(first.combined.count == plaintext.count + XChaCha20Poly1305.SealedBox.overheadByteCount)
        #expect(
            first.combined == Data(first.nonce.bytes)
                + XChaCha20Poly1305.seal(plaintext, key: aeadKey, nonce: first.nonce, associatedData: ad))

        let stored = try XChaCha20Poly1305.SealedBox(combined: Array(first.combined))
        #expect(stored == first)
        #expect(Array(try XChaCha20Poly1305.open(stored, key: aeadKey, associatedData: ad)) == plaintext)

        let empty = XChaCha20Poly1305.seal([UInt8](), key: aeadKey, associatedData: ad)
        #expect(empty.combined.count == XChaCha20Poly1305.SealedBox.overheadByteCount)
        #expect(
            try XChaCha20Poly1305.open(
                try XChaCha20Poly1305.SealedBox(combined: empty.combined), key: aeadKey, associatedData: ad
            ).isEmpty)
    }

    @Test func refusesBytesTooShortToHoldANonceAndATag() {
        for length in [0, 1, AEADNonce.byteCount, XChaCha20Poly1305.SealedBox.overheadByteCount - 1] {
            #expect(throws: CryptoError(.authenticationFailed, ""), "\(length) bytes") {
                try XChaCha20Poly1305.SealedBox(combined: [UInt8](repeating: 0, count: length))
            }
        }
    }

    /// A flipped bit anywhere (nonce, ciphertext or tag), the wrong key, or other associated data:
    /// nothing opens, and the bulk path lets no plaintext out.
    @Test func refusesEveryFlippedByteTheWrongKeyAndOtherAssociatedData() throws {
        let aeadKey = SymmetricKey.random()
        let plaintext = Array("a record payload".utf8), ad = Array("record 7".utf8)
        let combined = Array(XChaCha20Poly1305.seal(plaintext, key: aeadKey, associatedData: ad).combined)
        for index in combined.indices {
            var flipped = combined
            flipped[index] ^= 0x01
            let box = try XChaCha20Poly1305.SealedBox(combined: flipped)
            #expect(throws: CryptoError(.authenticationFailed, ""), "flip at \(index)") {
                try XChaCha20Poly1305.open(box, key: aeadKey, associatedData: ad)
            }
            var output = [UInt8](repeating: 0xAA, count: plaintext.count)
            let opened = flipped.withUnsafeBytes { c in
                ad.withUnsafeBytes { a in
                    output.withUnsafeMutableBytes {
                        XChaCha20Poly1305.open(combined: c, key: aeadKey, associatedData: a, into: $0)
                    }
                }
            }
            #expect(!opened && !output.contains(where: { $0 != 0 && $0 != 0xAA }), "flip at \(index)")
        }
        let box = try XChaCha20Poly1305.SealedBox(combined: combined)
        #expect(throws: CryptoError(.authenticationFailed, "")) {
            try XChaCha20Poly1305.openSecret(box, key: .random(), associatedData: ad)
        }
        #expect(throws: CryptoError(.authenticationFailed, "")) {
            try XChaCha20Poly1305.open(box, key: aeadKey, associatedData: ad + [0])
        }

        var output = [UInt8](repeating: 0, count: plaintext.count)
        #expect(
            combined.withUnsafeBytes { c in
                ad.withUnsafeBytes { a in
                    output.withUnsafeMutableBytes {
                        XChaCha20Poly1305.open(combined: c, key: aeadKey, associatedData: a, into: $0)
                    }
                }
            })
        #expect(output == plaintext)
    }
}
