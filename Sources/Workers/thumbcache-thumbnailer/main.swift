// What thumbcache's .thumbnailer plug-in runs, once per file: see PlugInMain. The image worker's
// program answers the same calls (the package installs one file under both names); this one
// gives a build's products the name the entry runs.
import ThumbcachePlugIn

PlugInMain.run(CommandLine.arguments)
