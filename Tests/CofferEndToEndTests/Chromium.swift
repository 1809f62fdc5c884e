import CofferTestSupport
import Foundation
import Testing

/// Draws a page with headless Chromium, as a person opening it would see it.
enum Chromium {
    /// The PNG Chromium draws of `page` (beside it, named like it), or nil with a note when
    /// Chromium is not installed (the page was then only parsed). A PNG that is not one fails.
    /// With COFFER_SCREENSHOTS=DIR in the environment, a copy of the PNG is kept there.
    static func screenshot(_ page: URL, sandbox: Sandbox, size: String) throws -> Data? {
        guard
            let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            print(
                "Chromium is not installed: \(page.lastPathComponent) was parsed but not drawn (apt-get install chromium)."
            )
            return nil
        }
        let png = page.deletingPathExtension().appendingPathExtension("png")
        let status = try sandbox.runTool(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--screenshot=\(png.path)", "--window-size=\(size)",
                page.absoluteString,
            ])
        #expect(status == 0)
        let image = try Data(contentsOf: png)
        if let folder = ProcessInfo.processInfo.environment["COFFER_SCREENSHOTS"] {
            try? image.write(to: URL(fileURLWithPath: folder).appendingPathComponent(png.lastPathComponent))
        }
        #expect(image.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        return image
    }
}
