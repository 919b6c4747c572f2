from amqpcli.cli.app import main

main()
