from memx_mcp.server.app import main

main()
