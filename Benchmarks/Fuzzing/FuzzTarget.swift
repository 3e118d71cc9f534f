import ActiGraphLink
import ActiGraphLinkSDK
import ArctopSDK
import BlendMicroClient
import Capture
import DoppelKit
import E4
import E4Link
import EmStatPico
import EmStatPicoClient
import Foundation
import KardiaRelay
import MethodScriptFormat
import Muse
import Signals

/// A parser of outside input, fuzzed: a name, where its corpus of valid
/// inputs is, and what to do with one input. An input that crashes or hangs
/// the parser is a bug; an input it refuses is what it should do.
public struct FuzzTarget: Sendable {
  public let name: String
  /// What is fuzzed, for the report.
  public let summary: String
  /// Corpus files: scenario-style files whole, or `.hex` files with one input per line.
  public let corpus: @Sendable (_ root: URL) -> [[UInt8]]
  public let run: @Sendable (_ input: [UInt8]) async -> Void

  /// Every parser Doppel has that reads input from outside: files, firmware
  /// commands, and the client stacks' decoders of what a (possibly hostile)
  /// device sends.
  public static let all: [FuzzTarget] = [
    FuzzTarget(
      name: "scenario-yaml", summary: "scenario files (ScenarioParser)",
      corpus: { root in
        files(root, in: ["Scenarios", "Tests/ScenarioTests/Malformed", "Examples/scenarios"], ext: "yaml")
      },
      run: { input in
        _ = try? DeviceCatalog.parser.parse(yaml: String(decoding: input, as: UTF8.self), file: "fuzz.yaml")
      }),
    FuzzTarget(
      name: "methodscript", summary: "MethodSCRIPT on the EmStat Pico's firmware (MethodScriptParser)",
      corpus: { root in files(root, in: ["Scenarios/emstat-pico/scripts"], ext: "mscr") },
      run: { input in _ = MethodScriptParser().parse(text: String(decoding: input, as: UTF8.self)) }),
    FuzzTarget(
      name: "vsp-lines", summary: "the EmStat Pico's VSP line reader and commands (RX FIFO writes)",
      corpus: { root in hex(root, "vsp-lines") },
      run: { input in
        let pico = EmStatPico()
        for chunk in stride(from: 0, to: max(input.count, 1), by: 20) {
          let piece = Array(input[min(chunk, input.count)..<min(chunk + 20, input.count)])
          try? await pico.write(
            characteristic: EmStatPico.rxFIFO, value: piece, type: .withoutResponse, central: CentralID("fuzz"))
        }
      }),
    FuzzTarget(
      name: "actigraph-messages", summary: "ActiGraph Link requests on the device (LinkMessageAssembler, firmware)",
      corpus: { root in hex(root, "actigraph-messages") },
      run: { input in
        var assembler = LinkMessageAssembler()
        _ = assembler.add(input)
        let monitor = ActiGraphLink()
        try? await monitor.write(
          characteristic: ActiGraphLink.command, value: input, type: .withResponse, central: CentralID("fuzz"))
      }),
    FuzzTarget(
      name: "actigraph-json", summary: "ActiGraph SDK configuration requests (JSON)",
      corpus: { root in hex(root, "actigraph-json") },
      run: { input in _ = AGDeviceSDK.check(configuration: String(decoding: input, as: UTF8.self)) }),
    FuzzTarget(
      name: "e4-commands", summary: "E4 commands on the wristband's firmware",
      corpus: { root in hex(root, "e4-commands") },
      run: { input in
        let wristband = E4()
        try? await wristband.write(
          characteristic: E4.command, value: input, type: .withResponse, central: CentralID("fuzz"))
      }),
    FuzzTarget(
      name: "e4-packets", summary: "the E4 link SDK's decoders of every notification (E4PacketDecoder)",
      corpus: { root in hex(root, "e4-packets") },
      run: { input in
        _ = E4PacketDecoder.bvp(input)
        _ = E4PacketDecoder.acceleration(input)
        _ = E4PacketDecoder.gsr(input)
        _ = E4PacketDecoder.temperature(input)
        _ = E4PacketDecoder.interbeatInterval(input)
        _ = E4PacketDecoder.battery(input)
        _ = E4PacketDecoder.control(input)
      }),
    FuzzTarget(
      name: "muse-commands", summary: "commands on the Muse headband's control characteristic",
      corpus: { root in hex(root, "muse-commands") },
      run: { input in
        let headband = MuseHeadband()
        try? await headband.write(
          characteristic: MuseHeadband.control, value: input, type: .withResponse, central: CentralID("fuzz"))
      }),
    FuzzTarget(
      name: "muse-packets", summary: "the Arctop SDK client's decoders of Muse notifications (MuseWire)",
      corpus: { root in hex(root, "muse-packets") },
      run: { input in
        _ = try? MuseWire.eeg(input)
        _ = try? MuseWire.acceleration(input)
        _ = try? MuseWire.batteryPercent(input)
        _ = try? MuseWire.controlText(input)
      }),
    FuzzTarget(
      name: "methodscript-packages", summary: "the EmStat client's decoder of MethodSCRIPT packages",
      corpus: { root in hex(root, "methodscript-packages") },
      run: { input in _ = try? MethodScriptPackage(line: String(decoding: input, as: UTF8.self)) }),
    FuzzTarget(
      name: "blend-micro-notifications", summary: "the Kardia client's decoder of Blend Micro notifications",
      corpus: { root in hex(root, "blend-micro-notifications") },
      run: { input in _ = BlendMicroClient.decode(input, at: .zero) }),
    FuzzTarget(
      name: "kardia-socketio",
      summary: "the Kardia analysis server's Engine.IO and Socket.IO session (a frame per line, 0x00 a binary one)",
      corpus: { root in hex(root, "kardia-socketio") },
      run: { input in
        let frames = input.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
          line == [0] ? nil : String(decoding: line, as: UTF8.self)
        }
        for version in EngineIOVersion.allCases {
          _ = KardiaAnalysisServer.replay(frames, version: version, configuration: .init(analysisInterval: 1))
        }
      }),
    FuzzTarget(
      name: "csv", summary: "CSV recordings and E4 Connect exports (CSVTable)",
      corpus: { root in hex(root, "csv") },
      run: { input in
        let table = CSVTable(String(decoding: input, as: UTF8.self))
        for row in table.rows { for field in row.fields { _ = Double(field.text) } }
      }),
    FuzzTarget(
      name: "btsnoop",
      summary: "btsnoop captures read down to ATT and imported (Capture: records, HCI, ACL reassembly, ATT)",
      corpus: { root in hex(root, "btsnoop") },
      run: { input in
        let capture: Capture
        do throws(CaptureError) {
          capture = try Capture(bytes: input)
        } catch {
          // Past the file header, every error names its record and byte offset.
          let whole: Set<CaptureError.Kind> = [.notBTSnoop, .unknownDatalink]
          precondition(
            whole.contains(error.kind) || input.count < 16 || (error.record != nil && error.offset != nil),
            "a btsnoop error without its record: \(error)")
          return
        }
        for peripheral in capture.peripherals {
          _ = try? ImportedScenario(peripheral: peripheral, source: "fuzz")
        }
      }),
  ]

  /// Whole files with extension `ext` under each folder.
  static func files(_ root: URL, in folders: [String], ext: String) -> [[UInt8]] {
    folders.flatMap { folder -> [[UInt8]] in
      let url = root.appendingPathComponent(folder)
      let names = (FileManager.default.enumerator(atPath: url.path)?.allObjects as? [String] ?? [])
        .filter { $0.hasSuffix("." + ext) }.sorted()
      return names.compactMap { FileManager.default.contents(atPath: url.appendingPathComponent($0).path) }
        .map { Array($0) }
    }
  }

  /// The inputs of `Benchmarks/FuzzCorpus/NAME.hex`, one per line.
  static func hex(_ root: URL, _ name: String) -> [[UInt8]] {
    let path = root.appendingPathComponent("Benchmarks/FuzzCorpus/\(name).hex").path
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
      let digits = Array(line.utf8)
      guard digits.count % 2 == 0 else { return nil }
      return stride(from: 0, to: digits.count, by: 2).compactMap {
        UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)
      }
    }
  }
}
