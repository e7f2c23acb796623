import ArgumentParser
import FoundationEssentials
import Thumbcache

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "List every indexed attribute of a file, like mdls.",
        discussion: """
            Shows the file as search sees it: its own attributes and those of app items whose \
            contentURL is the file (the app's win where both set one).

              thumbcache info ~/Pictures/IMG_4821.JPG
              thumbcache info photo.jpg --json
            """
    )

    @Argument(help: ArgumentHelp("An indexed file.", valueName: "file"))
    var file: String

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(name: .long, help: "Print the attributes as JSON.")
    var json = false

    func run() throws {
        let path = FilePaths.resolved(file)
        try cacheOptions.requireExisting(toDo: "look up")
        let index = try cacheOptions.openIndex()
        guard let item = try index.item(path: path) else {
            let why = FileManager.default.fileExists(atPath: path) ? "not in the index (run `thumbcache warm` on its directory)" : "no such file, and not in the index"
            throw CommandFailure("\(path): \(why)")
        }
        if json {
            var out = JSONText(pretty: true)
            AttributeFormat.write(item, into: &out)
            print(out.text)
            return
        }
        let width = item.attributes.keys.map(\.count).max() ?? 0
        for (name, value) in item.attributes.sorted(by: { $0.key < $1.key }) {
            print(name + String(repeating: " ", count: max(0, width - name.count)) + " = " + AttributeFormat.text(value))
        }
        if let id = item.identifier { print("(app item \(id)" + (item.domainIdentifier.map { " in domain \($0)" } ?? "") + ")") }
    }
}
