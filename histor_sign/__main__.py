from histor_sign.cli import main

main()
