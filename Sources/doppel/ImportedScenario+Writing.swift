import ArgumentParser
import Capture
import DoppelKit

extension ImportedScenario {
  /// Writes the files into `folder`; exit status 1, saying why, when it
  /// cannot. Returns the scenario's path.
  func writeFiles(into folder: String) throws -> String {
    do {
      try write(into: folder)
    } catch {
      printError("cannot write into \(folder): \(error.localizedDescription)")
      throw ExitCode(1)
    }
    return folder + "/" + Self.scenarioFile
  }

  /// Reads a written scenario back with the catalog's parser: what doppel
  /// writes must be a valid scenario, and a failure here is doppel's bug,
  /// reported as one (exit status 1).
  static func checkWritten(_ scenario: String, by command: String) throws {
    do {
      _ = try DeviceCatalog.parser.parse(file: scenario)
    } catch {
      printError("doppel \(command) wrote a scenario it cannot read (a bug in doppel):\n\(error)")
      throw ExitCode(1)
    }
  }
}
