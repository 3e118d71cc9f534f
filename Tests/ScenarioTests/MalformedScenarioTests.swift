import Foundation
import Scenario
import Testing

/// The malformed corpus: each `Malformed/NN-short-name.yaml` is parsed, and
/// every error it yields must read exactly as the lines of its sidecar
/// `NN-short-name.expected`, with the file named `Malformed/NN-short-name.yaml`.
@Suite struct MalformedScenarioTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Malformed")

  /// The corpus' file names without extension, sorted.
  static let names: [String] = {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return files.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(".yaml".count)) }.sorted()
  }()

  static func expected(_ name: String) throws -> String {
    let text = try String(contentsOf: folder.appendingPathComponent("\(name).expected"), encoding: .utf8)
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
  }

  @Test func theCorpusIsComplete() throws {
    #expect(Self.names.count >= 30)
    let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path)
    for file in files {
      let name = (file as NSString).deletingPathExtension
      let ext = (file as NSString).pathExtension
      #expect(["yaml", "expected"].contains(ext), "\(file) is neither a scenario nor a sidecar")
      #expect(files.contains("\(name).yaml") && files.contains("\(name).expected"), "\(file) has no pair")
      #expect(name.wholeMatch(of: /[0-9]{2}-[a-z0-9-]+/) != nil, "\(file) is not named NN-short-name")
    }
    #expect(Set(Self.names.map { $0.prefix(2) }).count == Self.names.count, "two files share a number")
  }

  @Test(arguments: MalformedScenarioTests.names)
  func reportsExactlyTheExpectedErrors(_ name: String) throws {
    let path = Self.folder.appendingPathComponent("\(name).yaml").path
    let relative = "Malformed/\(name).yaml"
    let expected = try Self.expected(name)
    #expect(!expected.isEmpty)
    do {
      let scenario = try TestModels.parser.parse(file: path)
      Issue.record("\(relative) was accepted as '\(scenario.name)'; expected:\n\(expected)")
    } catch {
      #expect(!error.errors.isEmpty)
      #expect(error.errors.allSatisfy { $0.file == path }, "errors name another file than the one parsed")
      let actual = error.errors.map { error in
        var error = error
        error.file = relative
        return error.description
      }
      #expect(actual.joined(separator: "\n") == expected)
    }
  }

  /// Parsing the text under a given name reports the same errors as parsing the file.
  @Test(arguments: MalformedScenarioTests.names)
  func textAndFileAgree(_ name: String) throws {
    let url = Self.folder.appendingPathComponent("\(name).yaml")
    let text = try String(contentsOf: url, encoding: .utf8)
    let relative = "Malformed/\(name).yaml"
    do {
      _ = try TestModels.parser.parse(yaml: text, file: relative)
      Issue.record("\(relative) was accepted")
    } catch {
      #expect(error.description == (try Self.expected(name)))
    }
  }

  @Test func aMissingFileIsReportedWithoutALine() {
    let path = Self.folder.appendingPathComponent("no-such-scenario.yaml").path
    #expect {
      try TestModels.parser.parse(file: path)
    } throws: { error in
      (error as? ScenarioValidationError)?.description == "\(path): error: the file does not exist"
    }
  }

  @Test func aFileThatIsNotUTF8IsReported() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-latin1-\(UUID().uuidString).yaml")
    try Data([0x73, 0x63, 0x65, 0x6E, 0x3A, 0x20, 0xE9, 0xFF, 0x0A]).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    #expect {
      try TestModels.parser.parse(file: url.path)
    } throws: { error in
      (error as? ScenarioValidationError)?.description == "\(url.path): error: the file is not UTF-8 text"
    }
  }

  /// A duration longer than `Duration` can hold is an error, not a crash of
  /// the parser (`ScenarioDuration.parse` converts to Int64 nanoseconds).
  @Test func aDurationTooLongToRepresentIsAnErrorNotACrash() async {
    await #expect(processExitsWith: .success) {
      let yaml = "scenario: forever\nduration: 3000000h\ndevices: [{id: ecg, model: blend-micro}]\n"
      do {
        _ = try TestModels.parser.parse(yaml: yaml, file: "forever.yaml")
        exit(EXIT_FAILURE)
      } catch let error as ScenarioValidationError {
        exit(error.errors.count == 1 && error.errors[0].line == 2 ? EXIT_SUCCESS : EXIT_FAILURE)
      } catch {
        exit(EXIT_FAILURE)
      }
    }
  }
}
