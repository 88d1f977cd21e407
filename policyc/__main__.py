from policyc.commands.cli import run

run()
