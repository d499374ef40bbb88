from steepy.cli import main

main()
