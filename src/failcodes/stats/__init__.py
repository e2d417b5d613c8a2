"""Agreement and significance statistics: a pure numeric core plus table adapters."""
