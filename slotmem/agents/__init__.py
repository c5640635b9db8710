"""What agents see of a memory: the context built for a prompt (``context``), the memory tools
(``tools``, with writes checked by ``slotmem.safety``), and the two surfaces that serve them, an
llm toolbox (``llm_plugin``) and an MCP server (``mcp_server``). Clients of the Store."""
