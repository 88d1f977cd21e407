from policyc.cli import run

run()
