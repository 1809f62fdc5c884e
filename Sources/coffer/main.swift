import CofferCLI

Coffer.runAndExit()
