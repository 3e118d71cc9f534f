// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "Doppel",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "doppel", targets: ["doppel"]),
    .library(name: "DBus", targets: ["DBus"]),
    .library(name: "GATT", targets: ["GATT"]),
    .library(name: "BlueZ", targets: ["BlueZ"]),
    .library(name: "Loopback", targets: ["Loopback"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
  ],
  targets: [
    // libdbus-1, as Debian's libdbus-1-dev ships it. Header shim only.
    .systemLibrary(
      name: "CDBus",
      pkgConfig: "dbus-1",
      providers: [.apt(["libdbus-1-dev"])]
    ),
    // Swift D-Bus: connections, typed values, exported objects, signals.
    .target(name: "DBus", dependencies: ["CDBus", .product(name: "Logging", package: "swift-log")]),
    // Transport-neutral GATT vocabulary, the two seams (PeripheralHost, CentralLink) and the rules
    // every host enforces.
    .target(name: "GATT", dependencies: [.product(name: "Logging", package: "swift-log")]),
    // The in-process implementation of both seams, with a virtual clock and an executor of its own
    // (beside BlueZ, as NIOEmbedded is beside NIOPosix).
    .target(name: "Loopback", dependencies: ["GATT", .product(name: "Logging", package: "swift-log")]),
    // BlueZ over D-Bus, both roles: implements the GATT seams.
    .target(name: "BlueZ", dependencies: ["DBus", "GATT", .product(name: "Logging", package: "swift-log")]),
    // Emulated devices: transport-neutral, on the GATT seam only.
    // Signal sources devices sample: generators, synthetic physiology, recordings.
    .target(name: "Signals"),
    .target(
      name: "BlendMicro", dependencies: ["GATT", "Signals"], path: "Peripherals/BlendMicro", exclude: ["README.md"]),
    .target(name: "E4", dependencies: ["GATT", "Signals"], path: "Peripherals/E4", exclude: ["README.md"]),
    .target(
      name: "ActiGraphLink", dependencies: ["GATT", "Signals"], path: "Peripherals/ActiGraphLink",
      exclude: ["README.md"]),
    .target(name: "Muse", dependencies: ["GATT", "Signals"], path: "Peripherals/Muse", exclude: ["README.md"]),
    // A device declared by data (a profile, recorded notifications, write rules): what `doppel import` makes.
    .target(name: "Generic", dependencies: ["GATT"], path: "Peripherals/Generic", exclude: ["README.md"]),
    // MethodSCRIPT package encoding (PalmSens EmStat Pico): shared by the device model and its client.
    .target(name: "MethodScriptFormat"),
    .target(
      name: "EmStatPico", dependencies: ["GATT", "Signals", "MethodScriptFormat"], path: "Peripherals/EmStatPico",
      exclude: ["README.md"]),
    // Scenario files: format, validation, signal sources, timeline, faults, expectations, runner.
    .target(
      name: "Scenario",
      dependencies: [
        "GATT", "Loopback", "Signals", .product(name: "Yams", package: "Yams"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // Client stacks, shaped like the vendors' apps and SDKs.
    .target(name: "BlendMicroClient", dependencies: ["GATT"], path: "Sources/Clients/BlendMicroClient"),
    // The Empatica E4 link SDK's shape: authentication, discovery, a manager per wristband.
    .target(name: "E4Link", dependencies: ["GATT"], path: "Sources/Clients/E4Link", exclude: ["README.md"]),
    // The ActiGraph Link iOS SDK's shape: JSON requests and responses, error codes 0–11.
    .target(
      name: "ActiGraphLinkSDK", dependencies: ["GATT"], path: "Sources/Clients/ActiGraphLinkSDK", exclude: ["README.md"]
    ),
    // The Arctop iOS SDK's shape over a Muse headband, with a stand-in for Arctop's prediction service.
    .target(name: "ArctopSDK", dependencies: ["GATT"], path: "Sources/Clients/ArctopSDK", exclude: ["README.md"]),
    // PalmSens' BLEConnection shape: VSP lines, MethodSCRIPT upload, package parsing.
    .target(
      name: "EmStatPicoClient", dependencies: ["GATT", "MethodScriptFormat"], path: "Sources/Clients/EmStatPicoClient",
      exclude: ["README.md"]),
    // The Kardia app's analysis server and its relay client (Socket.IO over WebSocket), on SwiftNIO.
    .target(
      name: "KardiaRelay",
      dependencies: [
        "BlendMicroClient", "GATT",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOWebSocket", package: "swift-nio"),
      ],
      path: "Sources/Clients/KardiaRelay",
      exclude: ["README.md"]
    ),
    // Captures (btsnoop: btmon's monitor and Android's H4) read down to ATT, and the device in them.
    .target(name: "Capture", dependencies: ["GATT"]),
    // Everything wired together: the device catalog for scenarios, the BlueZ transport.
    .target(
      name: "DoppelKit",
      dependencies: [
        "BlueZ", "DBus", "GATT", "Signals", "Scenario", "BlendMicro", "BlendMicroClient", "E4", "E4Link", "KardiaRelay",
        "ActiGraphLink", "ActiGraphLinkSDK",
        "EmStatPico", "EmStatPicoClient", "MethodScriptFormat", "Muse", "ArctopSDK", "Generic",
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .executableTarget(
      name: "doppel",
      dependencies: ["DoppelKit", "Capture", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    // An independent central on Doppel's BlueZ library, held to a scenario by `doppel test` (Examples/).
    .executableTarget(
      name: "blend-micro-central", dependencies: ["BlueZ", "DBus", "GATT"], path: "Examples/BlendMicroCentral"),
    // Benchmarks that print figures beside a peer's (ci/bench runs them).
    .executableTarget(
      name: "doppel-bench",
      dependencies: ["DBus", "GATT", "Loopback"],
      path: "Benchmarks/doppel-bench"
    ),
    // The notification benchmark (ci/bench-notify runs it in the lab).
    .executableTarget(
      name: "doppel-notify-bench",
      dependencies: ["BlueZ", "DBus", "GATT", .product(name: "ArgumentParser", package: "swift-argument-parser")],
      path: "Benchmarks/notify-bench"
    ),
    // Every parser of outside input, fuzzed with a seeded mutation loop (ci/bench-fuzz, and in the unit tests).
    .target(
      name: "Fuzzing",
      dependencies: [
        "DoppelKit", "Signals", "E4", "E4Link", "EmStatPico", "EmStatPicoClient", "MethodScriptFormat", "ActiGraphLink",
        "ActiGraphLinkSDK", "BlendMicroClient", "KardiaRelay", "Muse", "ArctopSDK", "Capture",
      ],
      path: "Benchmarks/Fuzzing"),
    .executableTarget(name: "doppel-fuzz", dependencies: ["Fuzzing"], path: "Benchmarks/doppel-fuzz"),
    // A private dbus-daemon per test, for the D-Bus and BlueZ unit tests.
    .target(name: "DBusTestSupport", dependencies: ["DBus"], path: "Tests/DBusTestSupport"),
    // A host that counts how a model sends, for the models' sending paths.
    .target(name: "GATTTestSupport", dependencies: ["GATT", "Loopback"], path: "Tests/GATTTestSupport"),
    .testTarget(name: "DBusTests", dependencies: ["DBus", "DBusTestSupport"]),
    .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBus", "DBusTestSupport", "GATT"]),
    .testTarget(name: "GATTTests", dependencies: ["GATT"]),
    .testTarget(name: "LoopbackTests", dependencies: ["Loopback", "GATT"]),
    .testTarget(name: "SignalsTests", dependencies: ["Signals"]),
    .testTarget(
      name: "ScenarioTests", dependencies: ["Scenario", "GATT", "Loopback", "Signals"], exclude: ["Malformed"]),
    .testTarget(
      name: "BlendMicroTests",
      dependencies: ["BlendMicro", "BlendMicroClient", "GATT", "GATTTestSupport", "Loopback", "Signals"]),
    .testTarget(
      name: "KardiaRelayTests",
      dependencies: [
        "KardiaRelay", "BlendMicroClient", "Signals",
        .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
      ]),
    .testTarget(
      name: "ActiGraphLinkTests", dependencies: ["ActiGraphLink", "ActiGraphLinkSDK", "GATT", "Loopback", "Signals"]),
    .testTarget(
      name: "MuseTests", dependencies: ["Muse", "ArctopSDK", "GATT", "GATTTestSupport", "Loopback", "Signals"]),
    .testTarget(name: "E4Tests", dependencies: ["E4", "E4Link", "GATT", "GATTTestSupport", "Loopback", "Signals"]),
    .testTarget(
      name: "EmStatPicoTests",
      dependencies: ["EmStatPico", "EmStatPicoClient", "MethodScriptFormat", "GATT", "Loopback", "Signals"]),
    .testTarget(
      name: "DoppelKitTests", dependencies: ["DoppelKit", "Scenario", "GATT", "Loopback", "Signals", "BlendMicro"]),
    .testTarget(name: "DoppelCLITests", dependencies: ["doppel"]),
    .testTarget(name: "FuzzingTests", dependencies: ["Fuzzing"]),
    .testTarget(name: "GenericTests", dependencies: ["Generic", "GATT", "Loopback"]),
    .testTarget(
      name: "CaptureTests", dependencies: ["Capture", "GATT", "Loopback", "Generic", "DoppelKit"], exclude: ["Captures"]
    ),
    // End-to-end tests over real BlueZ; ci/test runs them inside the virtual lab.
    .testTarget(
      name: "LabTests",
      dependencies: [
        "BlueZ", "DBus", "GATT", "BlendMicro", "BlendMicroClient", "E4", "E4Link", "Signals", "EmStatPico",
        "EmStatPicoClient", "MethodScriptFormat", "ActiGraphLink", "ActiGraphLinkSDK", "DoppelKit", "Scenario",
      ]),
  ],
  swiftLanguageModes: [.v6]
)

// Test code is compiled without optimisation in every configuration: ci/test's one release build
// (`--build-tests`, for a release doppel in the lab) then spends its time optimising the code under
// test, not the tests. Test targets belong to no product, so the flag does not keep the package's
// libraries from being a dependency.
for target in package.targets where target.type == .test {
  target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Onone"])]
}
