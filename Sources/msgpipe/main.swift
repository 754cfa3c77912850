import MsgPipeCLI

await MsgPipeCommand.run()
