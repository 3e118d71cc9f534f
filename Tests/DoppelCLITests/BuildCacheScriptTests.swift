import Foundation
import Testing

/// `ci/build-cache`, the directory `ci/test` keeps a fresh clone's build in:
/// one per toolchain, a copy of the checkout synced by content, and nothing
/// removed or written outside its root.
@Suite struct BuildCacheScriptTests {
  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("ci/build-cache")

  /// Runs the script with `environment` over this process's; its output without the line end.
  func run(_ arguments: [String], environment: [String: String]) throws -> ProgramOutcome {
    var outcome = try ProgramOutcome.run(
      URL(fileURLWithPath: "/bin/bash"), [Self.script.path] + arguments, environment: environment)
    outcome.output = outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
    return outcome
  }

  /// A fresh root for one test, removed after it.
  func withRoot(_ body: (URL) throws -> Void) throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("build-cache-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    try body(root)
  }

  /// A folder with a `swift` that prints `version`, for PATH.
  func fakeToolchain(in root: URL, version: String) throws -> URL {
    let bin = root.appendingPathComponent("toolchain-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
    let swift = bin.appendingPathComponent("swift")
    try "#!/bin/sh\necho '\(version)'\n".write(to: swift, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: swift.path)
    return bin
  }

  @Test func oneDirectoryPerToolchainMadeUnderTheRoot() throws {
    try withRoot { root in
      let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
      let one = try fakeToolchain(in: root, version: "Swift version 6.3.1")
      let other = try fakeToolchain(in: root, version: "Swift version 6.4")
      let cache = root.appendingPathComponent("cache").path
      let first = try run(["dir"], environment: ["DOPPEL_BUILD_CACHE": cache, "PATH": "\(one.path):\(path)"])
      let again = try run(["dir"], environment: ["DOPPEL_BUILD_CACHE": cache, "PATH": "\(one.path):\(path)"])
      let newer = try run(["dir"], environment: ["DOPPEL_BUILD_CACHE": cache, "PATH": "\(other.path):\(path)"])
      #expect(first.status == 0, "\(first.error)")
      #expect(first.output.hasPrefix(cache + "/"))
      #expect(first.output == again.output, "the same toolchain must get the same directory")
      #expect(newer.status == 0, "\(newer.error)")
      #expect(newer.output.hasPrefix(cache + "/"))
      #expect(newer.output != first.output, "another toolchain must get a directory of its own")
      var isDirectory: ObjCBool = false
      #expect(FileManager.default.fileExists(atPath: first.output, isDirectory: &isDirectory) && isDirectory.boolValue)

      let dropped = try run(["drop", first.output], environment: ["DOPPEL_BUILD_CACHE": cache])
      #expect(dropped.status == 0, "\(dropped.error)")
      #expect(!FileManager.default.fileExists(atPath: first.output))
      #expect(FileManager.default.fileExists(atPath: newer.output), "drop removes only the directory named")
    }
  }

  @Test func refusesToRemoveAnythingOutsideItsRoot() throws {
    try withRoot { root in
      let outside = root.appendingPathComponent("outside")
      try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
      let cache = root.appendingPathComponent("cache").path
      let kept = try run(["dir"], environment: ["DOPPEL_BUILD_CACHE": cache])
      #expect(kept.status == 0, "\(kept.error)")
      for target in [outside.path, cache + "/../outside", cache + "/", cache, kept.output + "/.."] {
        let refused = try run(["drop", target], environment: ["DOPPEL_BUILD_CACHE": cache])
        #expect(refused.status == 2, "drop \(target)")
        #expect(refused.error.contains("is not a directory under \(cache)"), "\(refused.error)")
      }
      #expect(FileManager.default.fileExists(atPath: outside.path))
      #expect(FileManager.default.fileExists(atPath: kept.output), "a refused drop removes nothing")
    }
  }

  /// `sync` from `checkout` (its working directory) into `kept`.
  func sync(_ checkout: URL, into kept: String, root cache: String) throws -> ProgramOutcome {
    var outcome = try ProgramOutcome.run(
      URL(fileURLWithPath: "/bin/bash"),
      ["-c", "cd \"$1\" && exec bash \"$2\" sync \"$3\"", "-", checkout.path, Self.script.path, kept],
      environment: ["DOPPEL_BUILD_CACHE": cache])
    outcome.error = outcome.error.trimmingCharacters(in: .whitespacesAndNewlines)
    return outcome
  }

  /// A file's modification time.
  func modified(_ path: String) throws -> Date? {
    try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
  }

  /// The copy keeps an unchanged file's time (so SwiftPM does not rebuild
  /// it), takes a changed file, removes a deleted one, leaves what git
  /// ignores alone, and holds the checkout's Package.resolved or none.
  @Test func syncCopiesByContent() throws {
    try withRoot { root in
      let checkout = root.appendingPathComponent("checkout")
      let sources = checkout.appendingPathComponent("Sources")
      try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
      func write(_ text: String, _ name: String) throws {
        try text.write(to: checkout.appendingPathComponent(name), atomically: false, encoding: .utf8)
      }
      try write(".build/\nPackage.resolved\n", ".gitignore")
      try write("let a = 1\n", "Sources/A.swift")
      try write("let b = 1\n", "Sources/B.swift")
      try write("let c = 1\n", "Sources/C.swift")
      try write("{\"pins\": []}\n", "Package.resolved")
      let cache = root.appendingPathComponent("cache").path
      let kept = try run(["dir"], environment: ["DOPPEL_BUILD_CACHE": cache]).output
      let first = try sync(checkout, into: kept, root: cache)
      #expect(first.status == 0, "\(first.error)")
      let copy = kept + "/src"
      #expect(FileManager.default.contents(atPath: copy + "/Sources/A.swift") == Data("let a = 1\n".utf8))
      #expect(FileManager.default.fileExists(atPath: copy + "/Package.resolved"))
      // Something the build left in the copy, which git ignores.
      try FileManager.default.createDirectory(atPath: copy + "/.build", withIntermediateDirectories: true)
      _ = FileManager.default.createFile(atPath: copy + "/.build/product", contents: Data("built".utf8))
      let past = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down))
      for name in ["A", "B"] {
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: copy + "/Sources/\(name).swift")
      }

      try write("let a = 1\n", "Sources/A.swift")  // rewritten, the same bytes
      try write("let b = 2\n", "Sources/B.swift")
      try FileManager.default.removeItem(at: sources.appendingPathComponent("C.swift"))
      try FileManager.default.removeItem(at: checkout.appendingPathComponent("Package.resolved"))
      let second = try sync(checkout, into: kept, root: cache)
      #expect(second.status == 0, "\(second.error)")
      #expect(try modified(copy + "/Sources/A.swift") == past, "an unchanged file keeps its time")
      #expect(FileManager.default.contents(atPath: copy + "/Sources/B.swift") == Data("let b = 2\n".utf8))
      #expect(try modified(copy + "/Sources/B.swift").map { $0 > past } == true)
      #expect(!FileManager.default.fileExists(atPath: copy + "/Sources/C.swift"))
      #expect(!FileManager.default.fileExists(atPath: copy + "/Package.resolved"))
      #expect(FileManager.default.contents(atPath: copy + "/.build/product") == Data("built".utf8))

      let outside = try sync(checkout, into: root.path, root: cache)
      #expect(outside.status == 2)
      #expect(outside.error.contains("is not a directory under \(cache)"), "\(outside.error)")
    }
  }

  @Test func namesWhatIsWrongWithItsInput() throws {
    let relative = try run(["dir"], environment: ["DOPPEL_BUILD_CACHE": "cache"])
    #expect(relative.status == 2)
    #expect(relative.error.contains("must be an absolute path (got 'cache'"), "\(relative.error)")
    let off = try run(["dir"], environment: ["DOPPEL_BUILD_CACHE": "off"])
    #expect(off.status == 2)
    #expect(off.error.contains("DOPPEL_BUILD_CACHE=off"), "\(off.error)")
    // The subcommand is checked first, whatever the root (DOPPEL_BUILD_CACHE=off ci/test runs this too).
    let unknown = try run(["keep"], environment: ["DOPPEL_BUILD_CACHE": "off"])
    #expect(unknown.status == 2)
    #expect(unknown.error.contains("usage: ci/build-cache dir | sync DIR | drop DIR"), "\(unknown.error)")
  }
}
