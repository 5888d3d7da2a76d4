from memx_mcp.server import main

main()
